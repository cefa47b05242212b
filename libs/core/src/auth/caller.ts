/** `admin`: manages their own tenant; `operator`: every tenant. */
export type Role = 'user' | 'admin' | 'operator';

/** Who is asking. Every request resolves to one, even with auth disabled. */
export interface Caller {
  tenantId: string;
  userId: string;
  role: Role;
  /**
   * The API key's id (tool bindings may name it). Never the key: for DATAAGENT_API_KEYS entries,
   * `env-` and the first 12 hex characters of the key's SHA-256. Absent with auth disabled.
   */
  keyId?: string;
}

export const ANONYMOUS_CALLER: Caller = { tenantId: 'default', userId: 'anonymous', role: 'user' };

/** Admins manage their tenant; operators every tenant, and theirs like an admin. */
export function isAdmin(caller: Caller): boolean {
  return caller.role === 'admin' || caller.role === 'operator';
}
