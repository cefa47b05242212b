import { createHash } from 'node:crypto';
import { registerDecorator, type ValidationArguments } from 'class-validator';

/** Roles a key may carry. `operator` (every tenant) is accepted ahead of its permissions. */
export const API_KEY_ROLES = ['user', 'admin', 'operator'] as const;
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

/** Shortest key accepted: a short key is guessable, and a typo'd entry is often short. */
export const API_KEY_MIN_LENGTH = 12;

/** One DATAAGENT_API_KEYS entry, defaults applied. */
export interface ApiKeySpec {
  key: string;
  tenantId: string;
  userId: string;
  role: ApiKeyRole;
}

export type ApiKeysParse = { ok: true; keys: ApiKeySpec[] } | { ok: false; problems: string[] };

/**
 * Parses DATAAGENT_API_KEYS entries: `key` (tenant "default", a user id derived from the key,
 * role user) or `key:tenant:user[:role]`. A key is at least {@link API_KEY_MIN_LENGTH}
 * characters and holds no `:` or `,` (they separate fields and entries); tenant and user are
 * not empty; the role is one of {@link API_KEY_ROLES}; no key appears twice.
 * @returns every key, or every problem found. A problem names its entry by position
 * ("entry 2", counting from 1) and never contains the key.
 */
export function parseApiKeys(entries: readonly string[]): ApiKeysParse {
  const keys: ApiKeySpec[] = [];
  const problems: string[] = [];
  const firstSeen = new Map<string, number>();
  entries.forEach((entry, i) => {
    const position = i + 1;
    const result = parseEntry(entry);
    if (typeof result === 'string') {
      problems.push(`entry ${position}: ${result}`);
      return;
    }
    const earlier = firstSeen.get(result.key);
    if (earlier !== undefined) {
      problems.push(`entry ${position}: repeats the key of entry ${earlier}`);
      return;
    }
    firstSeen.set(result.key, position);
    keys.push(result);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, keys };
}

/** The entry, or what is wrong with it (without the key). */
function parseEntry(entry: string): ApiKeySpec | string {
  const parts = entry.split(':');
  if (parts.length !== 1 && parts.length !== 3 && parts.length !== 4) {
    return `has ${parts.length} colon-separated parts; expected key or key:tenant:user[:role] (a key cannot contain ":")`;
  }
  const [key, tenant, user, role] = parts as [string, string?, string?, string?];
  const problems: string[] = [];
  if (key.length < API_KEY_MIN_LENGTH) problems.push(`the key is shorter than ${API_KEY_MIN_LENGTH} characters`);
  if (/\s/.test(key)) problems.push('the key contains white space');
  if (parts.length >= 3 && !tenant?.trim()) problems.push('the tenant is empty');
  if (parts.length >= 3 && !user?.trim()) problems.push('the user is empty');
  if (role !== undefined && !(API_KEY_ROLES as readonly string[]).includes(role)) {
    problems.push(`the role ${JSON.stringify(role)} is not one of ${API_KEY_ROLES.join(', ')}`);
  }
  if (problems.length > 0) return problems.join(', ');
  return {
    key,
    tenantId: tenant ?? 'default',
    userId: user ?? `key-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`,
    role: (role as ApiKeyRole | undefined) ?? 'user',
  };
}

/**
 * Validates a list of DATAAGENT_API_KEYS entries with {@link parseApiKeys}; the message lists
 * every problem by entry position, so config errors never print a key.
 */
export function IsApiKeyList(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'isApiKeyList',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === 'string') && parseApiKeys(value).ok,
        defaultMessage: ({ value }: ValidationArguments) => {
          if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return 'must be a comma-separated list of key or key:tenant:user[:role]';
          const parsed = parseApiKeys(value);
          return parsed.ok ? '' : parsed.problems.join('; ');
        },
      },
    });
}
