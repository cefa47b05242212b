import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Role } from './caller.js';

/** A key issued through the API. Only its hash is kept; `prefix` lets people recognise it. */
export interface ApiKeyRecord {
  keyId: string;
  tenantId: string;
  userId: string;
  role: Role;
  /** The key's first characters (`da_Xy12Ab34`), safe to show. */
  prefix: string;
  /** SHA-256 of the key, hex. */
  keyHash: string;
  createdAt: Date;
  /** Who issued it (`tenant/user`). */
  createdBy: string;
  lastUsedAt?: Date;
  expiresAt?: Date;
  revokedAt?: Date;
}

export interface ApiKeyStore {
  create(record: ApiKeyRecord): Promise<void>;
  /** The key with this hash, revoked or not; null when there is none. */
  findByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  /** Keys of one tenant, or of all (`undefined`), newest first. */
  list(tenantId: string | undefined, page: { limit: number; offset: number }): Promise<ApiKeyRecord[]>;
  get(keyId: string): Promise<ApiKeyRecord | null>;
  /** Marks the key revoked (once; later calls keep the first time). Returns false when there is no such key. */
  revoke(keyId: string, at: Date): Promise<boolean>;
  /** Records a use (callers throttle it). */
  touch(keyId: string, at: Date): Promise<void>;
  /** Users of the tenant holding a key neither revoked nor expired at `at` (its max_users). */
  liveUsers(tenantId: string, at: Date): Promise<string[]>;
  /** Revokes every live key of the tenant; returns their hashes (for caches to forget). */
  revokeTenant(tenantId: string, at: Date): Promise<string[]>;
}

/** What every issued key starts with, so a leaked one is easy to spot (and scan for). */
export const MANAGED_KEY_PREFIX = 'da_';

/** A new key (shown once) and what is stored of it. */
export function issueApiKey(): { key: string; prefix: string; keyHash: string; keyId: string } {
  const key = `${MANAGED_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, MANAGED_KEY_PREFIX.length + 8), keyHash: hashApiKey(key), keyId: randomUUID() };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Issued keys in process memory (DATAAGENT_SESSION_STORE=memory and unit tests). */
export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly byId = new Map<string, ApiKeyRecord>();

  async create(record: ApiKeyRecord): Promise<void> {
    this.byId.set(record.keyId, structuredClone(record));
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const found = [...this.byId.values()].find((r) => r.keyHash === keyHash);
    return found ? structuredClone(found) : null;
  }

  async list(tenantId: string | undefined, page: { limit: number; offset: number }): Promise<ApiKeyRecord[]> {
    return [...this.byId.values()]
      .filter((r) => tenantId === undefined || r.tenantId === tenantId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.keyId < b.keyId ? -1 : 1))
      .slice(page.offset, page.offset + page.limit)
      .map((r) => structuredClone(r));
  }

  async get(keyId: string): Promise<ApiKeyRecord | null> {
    const found = this.byId.get(keyId);
    return found ? structuredClone(found) : null;
  }

  async revoke(keyId: string, at: Date): Promise<boolean> {
    const found = this.byId.get(keyId);
    if (!found) return false;
    found.revokedAt ??= at;
    return true;
  }

  async touch(keyId: string, at: Date): Promise<void> {
    const found = this.byId.get(keyId);
    if (found) found.lastUsedAt = at;
  }

  async liveUsers(tenantId: string, at: Date): Promise<string[]> {
    const live = [...this.byId.values()].filter((r) => r.tenantId === tenantId && !r.revokedAt && !(r.expiresAt && r.expiresAt <= at));
    return [...new Set(live.map((r) => r.userId))];
  }

  async revokeTenant(tenantId: string, at: Date): Promise<string[]> {
    const live = [...this.byId.values()].filter((r) => r.tenantId === tenantId && !r.revokedAt);
    for (const r of live) r.revokedAt = at;
    return live.map((r) => r.keyHash);
  }
}
