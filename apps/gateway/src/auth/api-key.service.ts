import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { parseApiKeys } from '#core/config/api-key-spec.js';
import { ANONYMOUS_CALLER, type Caller, type Role } from '#core/session/caller.js';
import { ApiError } from '../common/api-error.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS } from '../infra/tokens.js';

interface KeyEntry {
  digest: Buffer;
  caller: Caller;
}

const digest = (key: string) => createHash('sha256').update(key).digest();

/**
 * Resolves an API key to a caller. DATAAGENT_API_KEYS entries are `key` (tenant
 * "default", a user id derived from the key) or `key:tenant:user[:role]`, read by
 * parseApiKeys (the config validation has already refused bad entries).
 * Keys are compared by digest in constant time and never logged.
 */
@Injectable()
export class ApiKeyService {
  private readonly entries: KeyEntry[];
  private readonly disabled: boolean;

  /** @throws Error when an entry is bad (the config validation refuses those at startup already). */
  constructor(@Inject(SETTINGS) settings: GatewaySettings) {
    this.disabled = settings.server.authDisabled;
    const parsed = parseApiKeys(settings.server.apiKeys);
    if (!parsed.ok) throw new Error(`DATAAGENT_API_KEYS: ${parsed.problems.join('; ')}`);
    // `operator` is accepted ahead of its permissions: until Role names it, it passes no admin check.
    this.entries = parsed.keys.map((k) => {
      const d = digest(k.key);
      return { digest: d, caller: { tenantId: k.tenantId, userId: k.userId, role: k.role as Role, keyId: `env-${d.toString('hex').slice(0, 12)}` } };
    });
  }

  /**
   * @throws ApiError 401 when the key is missing or unknown (unless auth is disabled).
   */
  resolve(key: string | undefined): Caller {
    if (this.disabled) return ANONYMOUS_CALLER;
    if (!key) throw new ApiError(401, 'missing_api_key', 'An API key is required: send it as the X-API-Key header');
    const d = digest(key);
    const entry = this.entries.find((e) => timingSafeEqual(e.digest, d));
    if (!entry) throw new ApiError(401, 'invalid_api_key', 'The API key is not valid');
    return entry.caller;
  }
}
