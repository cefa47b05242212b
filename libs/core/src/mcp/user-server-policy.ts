import { checkOutboundUrl, type OutboundPolicy } from '../tools/builtin/net/outbound-guard.js';
import { parseMcpServer, type FieldError, type McpServerConfig } from './mcp-config.js';
import { matchStdioServer, type StdioAllowEntry } from './stdio-allowlist.js';
import { stdioPath } from './stdio-environment.js';

/** What the operator lets users register. */
export interface UserServerPolicy {
  /** DATAAGENT_MCP_STDIO_ALLOW, parsed: the stdio commands users may run, and the env names each may set. */
  stdioAllow: readonly StdioAllowEntry[];
  /** http_request's outbound policy (DATAAGENT_OUTBOUND_ALLOWLIST; tests inject a resolver). */
  outbound: OutboundPolicy;
  /** The environment stdio servers take their PATH from (this process's; tests inject one). */
  host?: NodeJS.ProcessEnv;
}

export type UserServerCheck =
  | { ok: true; server: McpServerConfig }
  /** A bad config: 422 naming each field. */
  | { ok: false; status: 422; errors: FieldError[] }
  /** Valid, but users may not run it: 403. */
  | { ok: false; status: 403; field: string; reason: string };

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

  const refusal = await stdioRefusal(server, policy.stdioAllow, policy.host);
  if (refusal) return { ok: false, status: 403, ...refusal };
  if (server.transport === 'stdio') return { ok: true, server };

  const refused = await checkMcpServerUrl(server.url!, policy.outbound);
  return refused ? { ok: false, status: 422, errors: [refused] } : { ok: true, server };
}

/**
 * Why users may not run this stdio server, or null: a command that is not on the operator's
 * allowlist by its real path, a launcher without the arguments the operator pinned, a chosen
 * folder, or an environment variable the operator does not let users set for that command.
 * Remote servers: always null. Workers ask again before connecting, so narrowing
 * DATAAGENT_MCP_STDIO_ALLOW stops servers registered before.
 * @param host the environment whose PATH the server will run with (and its command is looked up in).
 */
export async function stdioRefusal(server: McpServerConfig, stdioAllow: readonly StdioAllowEntry[], host: NodeJS.ProcessEnv = process.env): Promise<{ field: string; reason: string } | null> {
  if (server.transport !== 'stdio') return null;
  if (stdioAllow.length === 0) {
    return {
      field: 'command',
      reason: 'A stdio server runs a command on the workers, and the operator allows no command for users (DATAAGENT_MCP_STDIO_ALLOW is empty): register a remote server (sse or streamable-http) instead',
    };
  }
  const match = await matchStdioServer(server, stdioAllow, stdioPath(host));
  if (!match.ok) return { field: match.field, reason: match.reason };
  if (server.cwd !== undefined) return { field: 'cwd', reason: "Only the operator's configuration may choose the folder a stdio server runs in" };
  return null;
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
