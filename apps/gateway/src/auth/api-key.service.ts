import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { MANAGED_KEY_PREFIX, type ApiKeyRecord } from '#core/auth/managed-api-keys.js';
import { parseApiKeys } from '#core/config/api-key-spec.js';
import { ANONYMOUS_CALLER, type Caller, type Role } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { ApiError } from '../common/api-error.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS, STORE } from '../infra/tokens.js';

interface KeyEntry {
  digest: Buffer;
  caller: Caller;
}

const digest = (key: string) => createHash('sha256').update(key).digest();

/** Issued keys read from the store, and unknown ones, are trusted for this long at most (DATAAGENT_API_KEY_CACHE_SECONDS). */
interface CachedKey {
  caller: Caller | null;
  record?: ApiKeyRecord;
  until: number;
}

/** At most this many keys cached; a flood of random keys evicts the oldest first. */
const CACHE_LIMIT = 10_000;
/** A key's last use is written at most this often. */
const TOUCH_EVERY_MS = 60_000;

/**
 * Resolves an API key to a caller: DATAAGENT_API_KEYS entries (`key`, tenant "default", or
 * `key:tenant:user[:role]`, read by parseApiKeys), then keys issued through the API, found by
 * the SHA-256 of the key (never the key) and cached briefly, so a revocation applies on every
 * gateway within the cache time. Environment keys are compared by digest in constant time.
 * Keys are never logged.
 */
@Injectable()
export class ApiKeyService {
  private readonly entries: KeyEntry[];
  private readonly disabled: boolean;
  private readonly cacheMs: number;
  private readonly cache = new Map<string, CachedKey>();
  private readonly touched = new Map<string, number>();

  /** @throws Error when an entry is bad (the config validation refuses those at startup already). */
  constructor(
    @Inject(SETTINGS) settings: GatewaySettings,
    @Inject(STORE) private readonly store: Pick<ConversationStore, 'apiKeys'>,
  ) {
    this.disabled = settings.server.authDisabled;
    this.cacheMs = settings.server.apiKeyCacheSeconds * 1000;
    const parsed = parseApiKeys(settings.server.apiKeys);
    if (!parsed.ok) throw new Error(`DATAAGENT_API_KEYS: ${parsed.problems.join('; ')}`);
    this.entries = parsed.keys.map((k) => {
      const d = digest(k.key);
      return { digest: d, caller: { tenantId: k.tenantId, userId: k.userId, role: k.role as Role, keyId: `env-${d.toString('hex').slice(0, 12)}` } };
    });
  }

  /**
   * @throws ApiError 401 when the key is missing, unknown, revoked or expired (unless auth is disabled).
   */
  async resolve(key: string | undefined): Promise<Caller> {
    if (this.disabled) return ANONYMOUS_CALLER;
    if (!key) throw new ApiError(401, 'missing_api_key', 'An API key is required: send it as the X-API-Key header');
    const d = digest(key);
    const entry = this.entries.find((e) => timingSafeEqual(e.digest, d));
    if (entry) return entry.caller;
    const caller = key.startsWith(MANAGED_KEY_PREFIX) ? await this.issued(d.toString('hex')) : null;
    if (!caller) throw new ApiError(401, 'invalid_api_key', 'The API key is not valid');
    return caller;
  }

  /** Whether every request is the anonymous caller (DATAAGENT_AUTH_DISABLED). */
  get authDisabled(): boolean {
    return this.disabled;
  }

  /**
   * Whether the key `caller` was resolved from still resolves to them: an environment key still
   * configured, an issued key neither revoked nor expired (read from the store, not the cache:
   * what was issued on a key must end with it). Always, with auth disabled.
   */
  async isStillValid(caller: Caller): Promise<boolean> {
    if (this.disabled) return true;
    const { keyId } = caller;
    if (!keyId) return false;
    if (keyId.startsWith('env-')) return this.entries.some((e) => e.caller.keyId === keyId && e.caller.tenantId === caller.tenantId && e.caller.userId === caller.userId);
    const record = await this.store.apiKeys.get(keyId);
    if (!record || record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= Date.now())) return false;
    return record.tenantId === caller.tenantId && record.userId === caller.userId;
  }

  /** Forgets what this gateway cached about a key (it was just revoked here). */
  forget(keyHash: string): void {
    this.cache.delete(keyHash);
  }

  private async issued(keyHash: string): Promise<Caller | null> {
    const now = Date.now();
    let cached = this.cache.get(keyHash);
    if (!cached || cached.until <= now) {
      const record = await this.store.apiKeys.findByHash(keyHash);
      cached = { caller: record ? { tenantId: record.tenantId, userId: record.userId, role: record.role, keyId: record.keyId } : null, ...(record ? { record } : {}), until: now + this.cacheMs };
      this.cache.delete(keyHash);
      this.cache.set(keyHash, cached);
      if (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    }
    const { record, caller } = cached;
    if (!record || !caller || record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= now)) return null;
    if ((this.touched.get(record.keyId) ?? 0) + TOUCH_EVERY_MS <= now) {
      this.touched.set(record.keyId, now);
      if (this.touched.size > CACHE_LIMIT) this.touched.delete(this.touched.keys().next().value!);
      void this.store.apiKeys.touch(record.keyId, new Date(now)).catch(() => undefined);
    }
    return caller;
  }
}
