import { isAdmin, type Caller } from '#core/auth/caller.js';
import { ApiError } from '../common/api-error.js';

/** @throws ApiError 403 `admin_required` unless the caller is an admin (or an operator). */
export function requireAdmin(caller: Caller): void {
  if (!isAdmin(caller)) throw new ApiError(403, 'admin_required', 'Only an admin of the tenant may do this');
}
