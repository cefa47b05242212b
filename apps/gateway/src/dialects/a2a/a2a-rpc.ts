import { type ArgumentsHost, Catch } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../../common/api-error.js';
import { ApiExceptionFilter } from '../../common/api-exception.filter.js';

/** JSON-RPC 2.0's own codes and A2A's (A2A 1.0, "JSON-RPC error codes"). */
export const RPC_CODE = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Implementation-defined: DataAgent's own errors (unauthenticated, a conflict, a quota), with its error_code in `data`. */
  serverError: -32000,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004,
  extendedCardNotConfigured: -32007,
} as const;

export type RpcId = string | number | null;

/** A JSON-RPC error with DataAgent's `{error_code, details}` (and HTTP status) in `data`. */
export class A2aRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: { error_code: string; details?: Record<string, unknown> },
  ) {
    super(message);
  }

  /** The JSON-RPC error object. */
  toJson(): { code: number; message: string; data: { error_code: string; details: Record<string, unknown> } } {
    return { code: this.code, message: this.message, data: { error_code: this.data.error_code, details: this.data.details ?? {} } };
  }
}

/** `{jsonrpc, id, result}`. */
export function rpcResult(id: RpcId, result: unknown): { jsonrpc: '2.0'; id: RpcId; result: unknown } {
  return { jsonrpc: '2.0', id, result };
}

/** `{jsonrpc, id, error}`. */
export function rpcError(id: RpcId, error: A2aRpcError): { jsonrpc: '2.0'; id: RpcId; error: ReturnType<A2aRpcError['toJson']> } {
  return { jsonrpc: '2.0', id, error: error.toJson() };
}

/** The id of a JSON-RPC request body, when it has a usable one. */
export function rpcIdOf(body: unknown): RpcId {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * The JSON-RPC error an API error becomes: not found is A2A's TaskNotFound for tasks, a bad
 * field, an unknown assistant or context is invalid params, anything else DataAgent's own
 * server error with its error_code in `data`.
 */
export function rpcErrorOf(error: ApiError): A2aRpcError {
  const data = { error_code: error.errorCode, details: error.details };
  if (error.errorCode === 'run_not_found') return new A2aRpcError(RPC_CODE.taskNotFound, `Task not found: ${String(error.details.run_id ?? '')}`, data);
  if (error.errorCode === 'assistant_not_found') {
    return new A2aRpcError(RPC_CODE.invalidParams, `${error.message}: name one of the agent card's skills as message metadata assistant_id`, data);
  }
  if (error.errorCode === 'session_not_found') return new A2aRpcError(RPC_CODE.invalidParams, `Context not found: ${String(error.details.session_id ?? '')}`, data);
  if (error.status === 422 || error.status === 400 || error.status === 413) return new A2aRpcError(RPC_CODE.invalidParams, error.message, data);
  if (error.status === 500) return new A2aRpcError(RPC_CODE.internalError, error.message, data);
  return new A2aRpcError(RPC_CODE.serverError, error.message, data);
}

/**
 * Errors of the A2A endpoint around a JSON-RPC call (a bad key, a quota, an outage) as JSON-RPC
 * error responses, with the same HTTP status and Retry-After as everywhere
 * else: an A2A client surfaces the message, and its HTTP layer still sees 401 or 429.
 */
@Catch()
export class A2aErrorFilter extends ApiExceptionFilter {
  private id: RpcId = null;

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() === 'http') this.id = rpcIdOf(host.switchToHttp().getRequest<Request>().body);
    super.catch(exception, host);
  }

  protected override answer(error: ApiError): { status: number; body: unknown } {
    return { status: error.status, body: rpcError(this.id, rpcErrorOf(error)) };
  }
}
