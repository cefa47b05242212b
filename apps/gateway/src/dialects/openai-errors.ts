import { Catch } from '@nestjs/common';
import { ApiError } from '../common/api-error.js';
import { ApiExceptionFilter } from '../common/api-exception.filter.js';

/** OpenAI's error `type` for each status, so clients' own error classes apply. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** `{error: {message, type, param, code}}`, OpenAI's error body; `code` is DataAgent's error_code. */
export function openAiErrorBody(error: ApiError) {
  const fields = (error.details as { fields?: Record<string, unknown> }).fields;
  return { error: { message: error.message, type: errorType(error.status), param: fields ? (Object.keys(fields)[0] ?? null) : null, code: error.errorCode } };
}

/**
 * Errors of the OpenAI-compatible routes in OpenAI's shape, with the same statuses and
 * Retry-After as everywhere else (a 422 of the validation pipe is OpenAI's 400).
 */
@Catch()
export class OpenAiErrorFilter extends ApiExceptionFilter {
  protected override answer(error: ApiError): { status: number; body: unknown } {
    return { status: error.status === 422 ? 400 : error.status, body: openAiErrorBody(error) };
  }
}
