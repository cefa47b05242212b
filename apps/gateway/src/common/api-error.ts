/** An error a client can act on: an HTTP status, a stable code, a message and details. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toBody(): { error_code: string; message: string; details: Record<string, unknown> } {
    return { error_code: this.errorCode, message: this.message, details: this.details };
  }

  /** 422 `validation_failed` naming one field of the request and what is wrong with it. */
  static invalidField(field: string, message: string): ApiError {
    return new ApiError(422, 'validation_failed', `${field} ${message}`, { fields: { [field]: [message] } });
  }

  static notFound(what: string, id: string): ApiError {
    return new ApiError(404, `${what}_not_found`, `${what.replace(/_/g, ' ')} not found: ${id}`, { [`${what}_id`]: id });
  }
}
