import { SecretUnreadableError, type SecretCipher } from '../secrets/secret-cipher.js';
import type { McpServerConfig } from './mcp-config.js';

/** Whose server: each sealed value is bound to its owner, server and field. */
export interface McpServerOwner {
  tenantId: string;
  userId: string;
}

const SECRET_MAPS = ['env', 'headers'] as const;
/** Secret values of a server's OAuth settings, sealed like env and header values. */
const OAUTH_SECRETS = ['clientSecret', 'privateKey'] as const;
const OAUTH_FIELD = { clientSecret: 'oauth.client_secret', privateKey: 'oauth.private_key' } as const;

/** Thrown when a server with secret values is stored while no DATAAGENT_SECRET_KEY is configured. */
export class SecretKeyRequiredError extends Error {
  /** @param fields Each secret value, as `env.NAME` or `headers.NAME`. */
  constructor(readonly fields: string[]) {
    super(`${fields.join(', ')}: secret values are stored encrypted, and DATAAGENT_SECRET_KEY is not set`);
    this.name = 'SecretKeyRequiredError';
  }
}

/** The server's secret values as fields: `env.API_KEY`, `headers.Authorization`. */
export function secretFields(config: McpServerConfig): string[] {
  return [
    ...SECRET_MAPS.flatMap((map) => Object.keys(config[map] ?? {}).map((key) => `${map}.${key}`)),
    ...OAUTH_SECRETS.filter((key) => config.oauth?.[key] !== undefined).map((key) => OAUTH_FIELD[key]),
  ];
}

/**
 * The config to store: env and header values encrypted, each bound to its owner, server and field.
 * @throws SecretKeyRequiredError when there are secret values and no cipher: they are never stored in clear.
 */
export function sealMcpSecrets(owner: McpServerOwner, config: McpServerConfig, cipher: SecretCipher | undefined): McpServerConfig {
  const fields = secretFields(config);
  if (fields.length === 0) return { ...config };
  if (!cipher) throw new SecretKeyRequiredError(fields);
  return mapSecrets(config, (map, key, value) => cipher.seal(value, context(owner, config.name, map, key)));
}

/**
 * The stored config with its secret values decrypted. A value that cannot be decrypted (no key,
 * another key, altered) becomes `''` and is named in `unreadable`, so one bad value never hides
 * the user's other servers.
 */
export function openMcpSecrets(
  owner: McpServerOwner,
  config: McpServerConfig,
  cipher: SecretCipher | undefined,
): { config: McpServerConfig; unreadable: string[] } {
  const unreadable: string[] = [];
  const opened = mapSecrets(config, (map, key, sealed) => {
    try {
      if (!cipher) throw new SecretUnreadableError('other_key');
      return cipher.open(sealed, context(owner, config.name, map, key));
    } catch (err) {
      if (!(err instanceof SecretUnreadableError)) throw err;
      unreadable.push(map === 'oauth' ? OAUTH_FIELD[key as (typeof OAUTH_SECRETS)[number]] : `${map}.${key}`);
      return '';
    }
  });
  return { config: opened, unreadable };
}

function mapSecrets(config: McpServerConfig, fn: (map: (typeof SECRET_MAPS)[number] | 'oauth', key: string, value: string) => string): McpServerConfig {
  const out: McpServerConfig = { ...config };
  for (const map of SECRET_MAPS) {
    const values = config[map];
    if (values) out[map] = Object.fromEntries(Object.entries(values).map(([key, value]) => [key, fn(map, key, value)]));
  }
  if (config.oauth) {
    const oauth = { ...config.oauth };
    for (const key of OAUTH_SECRETS) if (oauth[key] !== undefined) oauth[key] = fn('oauth', key, oauth[key]);
    out.oauth = oauth;
  }
  return out;
}

function context(owner: McpServerOwner, server: string, map: string, key: string): string {
  return JSON.stringify(['mcp-server-secret', owner.tenantId, owner.userId, server, map, key]);
}
