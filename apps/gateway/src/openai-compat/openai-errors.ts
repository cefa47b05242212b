import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../common/api-error.js';
import { toApiError } from '../common/api-exception.filter.js';

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
export class OpenAiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('openai');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const error = toApiError(exception);
    if (error.status === 500) this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status === 422 ? 400 : error.status).json(openAiErrorBody(error));
  }
}
