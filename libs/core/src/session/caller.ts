export type Role = 'user' | 'admin';

/** Who is asking. Every request resolves to one, even with auth disabled. */
export interface Caller {
  tenantId: string;
  userId: string;
  role: Role;
}

export const ANONYMOUS_CALLER: Caller = { tenantId: 'default', userId: 'anonymous', role: 'user' };
