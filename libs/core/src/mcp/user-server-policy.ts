import { checkOutboundUrl, type OutboundPolicy } from '../tools/builtin/net/outbound-guard.js';
import { isStdioCommandAllowed, parseMcpServer, type FieldError, type McpServerConfig } from './mcp-config.js';

/** What the operator lets users register. */
export interface UserServerPolicy {
  /** DATAAGENT_MCP_STDIO_ALLOW: the stdio commands users may run. */
  stdioAllow: readonly string[];
  /** http_request's outbound policy (DATAAGENT_OUTBOUND_ALLOWLIST; tests inject a resolver). */
  outbound: OutboundPolicy;
}

export type UserServerCheck =
  | { ok: true; server: McpServerConfig }
  /** A bad config: 422 naming each field. */
  | { ok: false; status: 422; errors: FieldError[] }
  /** Valid, but users may not run it: 403. */
  | { ok: false; status: 403; field: string; reason: string };

/**
 * Environment variables that change which program an allowlisted command really runs (the
 * search path, preloaded libraries, interpreter options): a user's stdio server may not set them.
 */
const PROGRAM_CHANGING_ENV = /^(PATH|LD_\w*|DYLD_\w*|NODE_OPTIONS|NODE_PATH|PYTHON(PATH|HOME|STARTUP)|BASH_ENV|ENV|PERL5(OPT|LIB)|RUBY(OPT|LIB)|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|HOME|NPM_CONFIG_\w*)$/i;

/**
 * Checks a server a user registers through the API: a valid config whose name matches the
 * route's (`pathName`, for PUT), a stdio command only when the operator allowlisted it, and a
 * remote URL that passes http_request's outbound address check.
 */
export async function checkUserMcpServer(raw: unknown, policy: UserServerPolicy, pathName?: string): Promise<UserServerCheck> {
  const { server, errors } = parseMcpServer(raw, pathName);
  const givenName = (raw as { name?: unknown } | null)?.name;
  if (pathName !== undefined && givenName !== undefined && givenName !== pathName) {
    errors.push({ field: 'name', message: `must be "${pathName}", the name in the path (a server cannot be renamed: create the new name and delete the old)` });
  }
  if (!server || errors.length > 0) return { ok: false, status: 422, errors };

  const refusal = stdioRefusal(server, policy.stdioAllow);
  if (refusal) return { ok: false, status: 403, ...refusal };
  if (server.transport === 'stdio') return { ok: true, server };

  const refused = await checkMcpServerUrl(server.url!, policy.outbound);
  return refused ? { ok: false, status: 422, errors: [refused] } : { ok: true, server };
}

/**
 * Why users may not run this stdio server (a command not allowlisted, a chosen folder, an
 * environment variable that changes which program runs), or null. Remote servers: always null.
 * Workers ask again before connecting, so narrowing DATAAGENT_MCP_STDIO_ALLOW stops servers
 * registered before.
 */
export function stdioRefusal(server: McpServerConfig, stdioAllow: readonly string[]): { field: string; reason: string } | null {
  if (server.transport !== 'stdio') return null;
  const command = server.command!;
  if (!isStdioCommandAllowed(command, stdioAllow)) {
    const reason =
      stdioAllow.length === 0
        ? 'A stdio server runs a command on the workers, and the operator allows no command for users (DATAAGENT_MCP_STDIO_ALLOW is empty): register a remote server (sse or streamable-http) instead'
        : `A stdio server runs a command on the workers, and "${command}" is not on the operator's allowlist (DATAAGENT_MCP_STDIO_ALLOW)`;
    return { field: 'command', reason };
  }
  if (server.cwd !== undefined) return { field: 'cwd', reason: "Only the operator's configuration may choose the folder a stdio server runs in" };
  const risky = Object.keys(server.env ?? {}).find((name) => PROGRAM_CHANGING_ENV.test(name));
  return risky ? { field: `env.${risky}`, reason: `env.${risky} changes which program runs, so a user's stdio server may not set it` } : null;
}

/**
 * Whether a remote MCP server's URL passes http_request's outbound check: private, loopback and
 * link-local addresses (after DNS) are refused unless DATAAGENT_OUTBOUND_ALLOWLIST opens them.
 * @returns the error for field `url`, or null when it may be reached.
 */
export async function checkMcpServerUrl(url: string, outbound: OutboundPolicy): Promise<FieldError | null> {
  const check = await checkOutboundUrl(url, outbound);
  if (check.ok) return null;
  const hint = /not allowlisted/.test(check.reason) ? '; the operator can open it with DATAAGENT_OUTBOUND_ALLOWLIST' : '';
  return { field: 'url', message: `cannot be reached: ${check.reason}${hint}` };
}
