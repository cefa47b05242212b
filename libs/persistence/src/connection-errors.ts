/** Codes of failures to reach the database at all, as opposed to a statement it refused. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_SERVER_GONE_ERROR',
  'ER_LOCK_WAIT_TIMEOUT',
  'POOL_CLOSED',
]);

/**
 * Whether an error from the store means the database could not be reached (down, restarting,
 * out of connections): the write may succeed later, and a client should retry, not be told it
 * sent something wrong. TypeORM wraps driver errors in `driverError`.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; fatal?: unknown; driverError?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; depth++) {
    if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
    if (e.fatal === true) return true;
    e = (e.driverError ?? e.cause) as typeof e;
  }
  return false;
}
