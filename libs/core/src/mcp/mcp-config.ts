/**
 * MCP server configuration: the operator's file (DATAAGENT_MCP_CONFIG) in either shape, and a
 * user's servers from the API, validated into one form with an error per bad field.
 *
 * Accepted shapes of the file:
 * - our own `{"servers": [{"name", "command", "args", "env", "disabled", ...}]}`;
 * - the `{"mcpServers": {"name": {...}}}` map of Claude Desktop, Cursor and other MCP clients.
 */

export type McpTransport = 'stdio' | 'sse' | 'streamable-http';

export interface McpServerConfig {
  /** Letters, digits, `-` and `_` (no `__`): tools are named `name.tool`. */
  name: string;
  transport: McpTransport;
  /** stdio: the command run on the worker, its arguments, extra environment and folder. */
  command?: string;
  args?: string[];
  /** Secret values: stored encrypted, never returned, logged or put in events. */
  env?: Record<string, string>;
  cwd?: string;
  /** sse and streamable-http: the server's http(s) URL and extra headers (secret values). */
  url?: string;
  headers?: Record<string, string>;
  /** Per tool call; the worker's default applies when absent. */
  timeoutMs?: number;
  disabled?: boolean;
  /** Shown to the model for the server's tools; defaults to the name. */
  description?: string;
  /** Words in a user's message that point at this server (intent recognition). */
  triggerKeywords?: string[];
  /** Settings for single tools, by the tool's name on the server (without `server.`). */
  tools?: Record<string, McpToolSettings>;
  /** stdio, the operator's servers only: what the server's sandbox adds to the caller's workspace. */
  sandbox?: McpSandboxSettings;
  /** sse and streamable-http: how DataAgent signs in to the server with OAuth 2 (see docs/mcp-oauth.md). */
  oauth?: McpOAuthSettings;
}

/**
 * Whether a server is signed in to with its person's own OAuth sign-in: a remote server whose
 * config sends no static Authorization header and that is not signed in to as DataAgent itself.
 */
export function takesPersonalSignIn(server: McpServerConfig): boolean {
  if (server.transport === 'stdio' || server.oauth?.grant === 'client_credentials') return false;
  return !Object.keys(server.headers ?? {}).some((h) => h.toLowerCase() === 'authorization');
}

/**
 * OAuth settings of a remote server. Without them a server that answers 401 still gets a
 * person's sign-in: discovery, a client metadata document or dynamic registration.
 */
export interface McpOAuthSettings {
  /** Credentials registered with the server's authorization server beforehand. */
  clientId?: string;
  /** A secret value: stored encrypted, never returned. */
  clientSecret?: string;
  /** How a pre-registered client authenticates at the token endpoint; default what the server supports. */
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
  /**
   * `authorization_code` (default): each person signs in. `client_credentials`, for the
   * operator's servers only: DataAgent signs in as itself, with `clientSecret` or `privateKey`.
   */
  grant?: 'authorization_code' | 'client_credentials';
  /** client_credentials with private_key_jwt: the PEM private key (a secret value) and its JWS algorithm (default RS256). */
  privateKey?: string;
  signingAlgorithm?: string;
  /** Scope to ask for when the server names none. */
  scope?: string;
}

/** What the operator grants one of its stdio servers inside the sandbox. */
export interface McpSandboxSettings {
  /** A network namespace of its own with outbound access (never the host's loopback services). Default false. */
  network?: boolean;
  /** Host folders it may read besides the system's runtime and its own install folder. */
  readOnly?: string[];
  /** Host folders it may write besides the caller's workspace. */
  readWrite?: string[];
}

/** What the operator (or the user, for their own server) says about one tool, over its annotations. */
export interface McpToolSettings {
  /** This tool's call timeout, over the server's. */
  timeoutMs?: number;
  /** Safe to call again with the same arguments: a timeout or a lost connection is retried. Overrides idempotentHint / readOnlyHint. */
  idempotent?: boolean;
  /** Ask the person before each call (true), or never (false). Default: when its annotations say destructiveHint. */
  approval?: boolean;
}

export interface FieldError {
  /** The field as the client sent it (`url`, `env.API_KEY`, `servers[2].command`). */
  field: string;
  message: string;
}

export const MCP_NAME_PATTERN = /^(?!.*__)[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
export const MCP_TIMEOUT_RANGE = { min: 100, max: 600_000 } as const;
const MAX_ARGS = 100;
const MAX_MAP_ENTRIES = 100;
const MAX_KEYWORDS = 50;
const MAX_TOOL_SETTINGS = 500;
const MAX_TEXT = 2_000;

const TRANSPORT_ALIASES: Record<string, McpTransport> = {
  stdio: 'stdio',
  sse: 'sse',
  'streamable-http': 'streamable-http',
  streamablehttp: 'streamable-http',
  streamable_http: 'streamable-http',
  http: 'streamable-http',
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates one server (the API's body, or one entry of the file). `name` is taken from the
 * entry, or from `nameFromKey` (the `mcpServers` map's key). Unknown fields are ignored, so a
 * file written for another MCP client loads.
 */
export function parseMcpServer(raw: unknown, nameFromKey?: string, prefix = '', operator = false): { server?: McpServerConfig; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ field: `${prefix}${field}`, message });
  if (!isRecord(raw)) return { errors: [{ field: prefix.replace(/\.$/, '') || 'body', message: 'must be an object' }] };

  const name = raw.name ?? nameFromKey;
  if (typeof name !== 'string' || !MCP_NAME_PATTERN.test(name)) {
    fail('name', 'must be 1 to 48 letters, digits, "-" or "_", starting with a letter or digit, without "__" (tools are named name.tool)');
  }

  const declared = raw.transport ?? raw.type;
  let transport: McpTransport | undefined;
  if (declared !== undefined) {
    transport = typeof declared === 'string' ? TRANSPORT_ALIASES[declared.toLowerCase()] : undefined;
    if (!transport) fail(raw.transport !== undefined ? 'transport' : 'type', 'must be stdio, sse or streamable-http');
  } else if (raw.command !== undefined) {
    transport = 'stdio';
  } else if (typeof raw.url === 'string') {
    transport = /\/sse\/?$/.test(safePath(raw.url)) ? 'sse' : 'streamable-http';
  } else {
    fail('transport', 'give a command (stdio) or a url (sse, streamable-http)');
  }

  const server: Partial<McpServerConfig> = { name: name as string, transport };
  if (transport === 'stdio') {
    if (typeof raw.command !== 'string' || raw.command.trim() === '') fail('command', 'is required for stdio and must be a non-empty string');
    else server.command = raw.command;
    if (raw.args !== undefined) {
      if (!Array.isArray(raw.args) || raw.args.length > MAX_ARGS || !raw.args.every((a) => typeof a === 'string')) fail('args', `must be a list of at most ${MAX_ARGS} strings`);
      else server.args = raw.args as string[];
    }
    const env = stringMap(raw.env, 'env', fail);
    if (env) server.env = env;
    if (raw.cwd !== undefined) {
      if (typeof raw.cwd !== 'string' || raw.cwd === '') fail('cwd', 'must be a non-empty string');
      else server.cwd = raw.cwd;
    }
    if (raw.url !== undefined) fail('url', 'is not used by a stdio server');
  } else if (transport) {
    if (typeof raw.url !== 'string') fail('url', `is required for ${transport}`);
    else if (!isHttpUrl(raw.url)) fail('url', 'must be an absolute http:// or https:// URL');
    else server.url = raw.url;
    const headers = stringMap(raw.headers, 'headers', fail);
    if (headers) server.headers = headers;
    if (raw.command !== undefined) fail('command', `is not used by a ${transport} server`);
    if (raw.oauth !== undefined) {
      const oauth = oauthSettings(raw.oauth, operator, fail);
      if (oauth) server.oauth = oauth;
    }
  }

  const timeout = raw.timeout_ms ?? raw.timeoutMs;
  if (timeout !== undefined) {
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < MCP_TIMEOUT_RANGE.min || timeout > MCP_TIMEOUT_RANGE.max) {
      fail(raw.timeout_ms !== undefined ? 'timeout_ms' : 'timeoutMs', `must be a whole number of milliseconds from ${MCP_TIMEOUT_RANGE.min} to ${MCP_TIMEOUT_RANGE.max}`);
    } else server.timeoutMs = timeout;
  }
  if (raw.disabled !== undefined) {
    if (typeof raw.disabled !== 'boolean') fail('disabled', 'must be true or false');
    else server.disabled = raw.disabled;
  }
  if (raw.description !== undefined) {
    if (typeof raw.description !== 'string' || raw.description.length > MAX_TEXT) fail('description', `must be a string of at most ${MAX_TEXT} characters`);
    else server.description = raw.description;
  }
  const keywords = raw.trigger_keywords ?? raw.triggerKeywords;
  if (keywords !== undefined) {
    if (!Array.isArray(keywords) || keywords.length > MAX_KEYWORDS || !keywords.every((k) => typeof k === 'string' && k.trim() !== '' && k.length <= 100)) {
      fail(raw.trigger_keywords !== undefined ? 'trigger_keywords' : 'triggerKeywords', `must be a list of at most ${MAX_KEYWORDS} non-empty strings`);
    } else server.triggerKeywords = keywords as string[];
  }
  const tools = toolSettings(raw.tools, fail);
  if (tools) server.tools = tools;
  if (raw.sandbox !== undefined) {
    if (!operator) fail('sandbox', "only the operator's configuration may grant a server more than the caller's workspace");
    else if (transport !== 'stdio') fail('sandbox', 'applies to stdio servers only');
    else {
      const sandbox = sandboxSettings(raw.sandbox, fail);
      if (sandbox) server.sandbox = sandbox;
    }
  }
  return errors.length > 0 ? { errors } : { server: server as McpServerConfig, errors };
}

const OAUTH_KEYS: Record<string, keyof McpOAuthSettings> = {
  client_id: 'clientId',
  client_secret: 'clientSecret',
  token_endpoint_auth_method: 'tokenEndpointAuthMethod',
  grant: 'grant',
  private_key: 'privateKey',
  signing_algorithm: 'signingAlgorithm',
  scope: 'scope',
};
const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

function oauthSettings(value: unknown, operator: boolean, fail: (field: string, message: string) => void): McpOAuthSettings | undefined {
  if (!isRecord(value)) {
    fail('oauth', 'must be an object: {client_id?, client_secret?, token_endpoint_auth_method?, scope?}');
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = OAUTH_KEYS[key] ?? (Object.values(OAUTH_KEYS).includes(key as keyof McpOAuthSettings) ? (key as keyof McpOAuthSettings) : undefined);
    if (!name) fail(`oauth.${key}`, `is not an OAuth setting (${Object.keys(OAUTH_KEYS).join(', ')})`);
    else if (typeof v !== 'string' || v === '' || v.length > 8_192) fail(`oauth.${key}`, 'must be a non-empty string');
    else out[name] = v;
  }
  if (out.tokenEndpointAuthMethod !== undefined && !TOKEN_ENDPOINT_AUTH_METHODS.includes(out.tokenEndpointAuthMethod)) {
    fail('oauth.token_endpoint_auth_method', `must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}`);
  }
  if (out.grant !== undefined && out.grant !== 'authorization_code' && out.grant !== 'client_credentials') fail('oauth.grant', 'must be authorization_code or client_credentials');
  if (out.grant === 'client_credentials' && !operator) fail('oauth.grant', "client_credentials signs in as DataAgent itself: only the operator's configuration may use it");
  if ((out.privateKey !== undefined || out.signingAlgorithm !== undefined) && out.grant !== 'client_credentials') fail('oauth.private_key', 'is used by the client_credentials grant only');
  if (out.grant === 'client_credentials' && (!out.clientId || (!out.clientSecret && !out.privateKey))) fail('oauth', 'client_credentials needs client_id, and client_secret or private_key');
  if (out.clientSecret !== undefined && out.clientId === undefined) fail('oauth.client_secret', 'needs client_id');
  return out as McpOAuthSettings;
}

function sandboxSettings(value: unknown, fail: (field: string, message: string) => void): McpSandboxSettings | undefined {
  if (!isRecord(value)) {
    fail('sandbox', 'must be an object: {network?, read_only?, read_write?}');
    return undefined;
  }
  const out: McpSandboxSettings = {};
  if (value.network !== undefined) {
    if (typeof value.network !== 'boolean') fail('sandbox.network', 'must be true or false');
    else out.network = value.network;
  }
  for (const [key, field] of [['read_only', 'readOnly'], ['read_write', 'readWrite']] as const) {
    const dirs = value[key] ?? value[field];
    if (dirs === undefined) continue;
    if (!Array.isArray(dirs) || !dirs.every((d) => typeof d === 'string' && d.startsWith('/'))) fail(`sandbox.${key}`, 'must be a list of absolute folder paths');
    else out[field] = dirs as string[];
  }
  return out;
}

function toolSettings(value: unknown, fail: (field: string, message: string) => void): Record<string, McpToolSettings> | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value) || Object.keys(value).length > MAX_TOOL_SETTINGS) {
    fail('tools', `must be an object of at most ${MAX_TOOL_SETTINGS} tools, each {timeout_ms?, idempotent?, approval?}`);
    return undefined;
  }
  const out: Record<string, McpToolSettings> = {};
  for (const [tool, raw] of Object.entries(value)) {
    const field = `tools.${tool}`;
    if (tool === '' || tool.length > 128) fail(field, 'a tool name has 1 to 128 characters');
    if (!isRecord(raw)) {
      fail(field, 'must be an object: {timeout_ms?, idempotent?, approval?}');
      continue;
    }
    const settings: McpToolSettings = {};
    for (const key of Object.keys(raw)) {
      if (!['timeout_ms', 'timeoutMs', 'idempotent', 'approval'].includes(key)) fail(`${field}.${key}`, 'is not a tool setting (timeout_ms, idempotent, approval)');
    }
    const timeout = raw.timeout_ms ?? raw.timeoutMs;
    if (timeout !== undefined) {
      if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < MCP_TIMEOUT_RANGE.min || timeout > MCP_TIMEOUT_RANGE.max) {
        fail(`${field}.timeout_ms`, `must be a whole number of milliseconds from ${MCP_TIMEOUT_RANGE.min} to ${MCP_TIMEOUT_RANGE.max}`);
      } else settings.timeoutMs = timeout;
    }
    for (const flag of ['idempotent', 'approval'] as const) {
      if (raw[flag] === undefined) continue;
      if (typeof raw[flag] !== 'boolean') fail(`${field}.${flag}`, 'must be true or false');
      else settings[flag] = raw[flag];
    }
    out[tool] = settings;
  }
  return out;
}

/**
 * Parses the operator's config file text. Servers with errors are left out, each error named
 * by its place in the file; duplicate names keep the first.
 */
export function parseMcpConfigFile(text: string): { servers: McpServerConfig[]; errors: FieldError[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { servers: [], errors: [{ field: '(file)', message: `not JSON: ${(err as Error).message}` }] };
  }
  const entries: Array<{ raw: unknown; key?: string; prefix: string }> = [];
  if (isRecord(doc) && Array.isArray(doc.servers)) {
    doc.servers.forEach((raw, i) => entries.push({ raw, prefix: `servers[${i}].` }));
  } else if (isRecord(doc) && isRecord(doc.mcpServers)) {
    for (const [key, raw] of Object.entries(doc.mcpServers)) entries.push({ raw, key, prefix: `mcpServers.${key}.` });
  } else {
    return { servers: [], errors: [{ field: '(file)', message: 'expected {"servers": [...]} or {"mcpServers": {...}}' }] };
  }
  const servers: McpServerConfig[] = [];
  const errors: FieldError[] = [];
  for (const { raw, key, prefix } of entries) {
    const parsed = parseMcpServer(raw, key, prefix, true);
    errors.push(...parsed.errors);
    if (!parsed.server) continue;
    if (servers.some((s) => s.name === parsed.server!.name)) errors.push({ field: `${prefix}name`, message: `"${parsed.server.name}" is defined twice; the first is kept` });
    else servers.push(parsed.server);
  }
  return { servers, errors };
}

/** A server as the API returns it: secret values masked. */
export function maskSecrets(server: McpServerConfig): McpServerConfig {
  const mask = (map?: Record<string, string>) => (map ? Object.fromEntries(Object.keys(map).map((k) => [k, '***'])) : undefined);
  const oauth = server.oauth && {
    ...server.oauth,
    ...(server.oauth.clientSecret !== undefined ? { clientSecret: '***' } : {}),
    ...(server.oauth.privateKey !== undefined ? { privateKey: '***' } : {}),
  };
  return { ...server, ...(server.env ? { env: mask(server.env) } : {}), ...(server.headers ? { headers: mask(server.headers) } : {}), ...(oauth ? { oauth } : {}) };
}

function stringMap(value: unknown, field: string, fail: (field: string, message: string) => void): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value) || Object.keys(value).length > MAX_MAP_ENTRIES) {
    fail(field, `must be an object of at most ${MAX_MAP_ENTRIES} string values`);
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string') fail(`${field}.${key}`, 'must be a string');
  }
  return value as Record<string, string>;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function safePath(text: string): string {
  try {
    return new URL(text).pathname;
  } catch {
    return '';
  }
}
