import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';

/**
 * A call's arguments as a SHA-256 hex digest of their canonical JSON (keys sorted), so the same
 * arguments in any key order hash alike. Approvals and the once-only ledger are bound to it:
 * a call id reused with other arguments is another call.
 */
export function argsHash(args: Record<string, unknown>): string {
  return createHash('sha256').update(stringify(args) ?? '{}').digest('hex');
}
