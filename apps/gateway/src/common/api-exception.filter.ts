import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { isDatabaseUnavailable } from '#persistence/connection-errors.js';
import { isRedisUnavailable } from '#transport/redis-connection.js';
import { ApiError } from './api-error.js';

/** Maps every failure of an HTTP request to {error_code, message, details} with its status. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const res = host.switchToHttp().getResponse<Response>();
    const error = toApiError(exception);
    if (error.status === 500) this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    const { status, body } = this.answer(error);
    res.status(status).json(body);
  }

  /** The status and body an error is answered with; routes that speak another API's dialect override it. */
  protected answer(error: ApiError): { status: number; body: unknown } {
    return { status: error.status, body: error.toBody() };
  }
}

export function toApiError(exception: unknown): ApiError {
  if (exception instanceof ApiError) return exception;
  if (isRedisUnavailable(exception)) {
    return new ApiError(503, 'redis_unavailable', 'Redis is not answering; retry shortly', {}, { 'Retry-After': '5' });
  }
  if (isDatabaseUnavailable(exception)) {
    return new ApiError(503, 'database_unavailable', 'The database is not answering; retry shortly', {}, { 'Retry-After': '5' });
  }
  // Express's body parser errors arrive wrapped in an HttpException with the original as cause.
  const bodyParser = ((exception as { cause?: unknown })?.cause ?? exception) as { type?: string; limit?: number };
  if (bodyParser?.type === 'entity.parse.failed') return new ApiError(400, 'invalid_json', 'Request body is not valid JSON');
  if (bodyParser?.type === 'entity.too.large') {
    return new ApiError(413, 'payload_too_large', `Request body exceeds ${bodyParser.limit} bytes`, { limit: bodyParser.limit });
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code = status === 404 ? 'not_found' : status === 405 ? 'method_not_allowed' : status === 415 ? 'unsupported_media_type' : `http_${status}`;
    return new ApiError(status, code, exception.message);
  }
  return new ApiError(500, 'internal_error', 'Internal server error');
}
