/**
 * A configuration pasted from an MCP client (Claude Desktop, Cursor, most MCP servers' READMEs),
 * read into the bodies of single registrations. It only reshapes: each body then goes through
 * the same checks as one POST (parseMcpServer, the stdio and outbound policies, the store's
 * limits), so a paste can never do more than the equivalent single requests.
 */

/** What a request body is: one server as the API has always taken it, a paste, or neither. */
export type McpPasteReading =
  /** `{name, command | url, ...}`, or anything that is not an object: the single-server path, unchanged. */
  | { shape: 'server' }
  /** `{"mcpServers": {...}}` (Claude Desktop, Cursor's mcp.json) or the bare map `{"name": {...}}`. */
  | { shape: 'mcpServers' | 'map'; entries: PastedServer[] }
  /** An object that is none of those: `message` shows the accepted shapes. */
  | { shape: 'unknown'; message: string };

/** One entry of a paste, as the body of a single registration, or why it is left out. */
export type PastedServer = { name: string; body: Record<string, unknown> } | { name: string; skipped: string };

/** Most servers one paste may name: beyond, nobody pasted a client's config by hand. */
export const MAX_PASTED_SERVERS = 100;

/** The shapes accepted, as a 422 shows them. */
export const ACCEPTED_MCP_SHAPES = [
  '{"name": "github", "url": "https://…", "headers": {…}} or {"name": "git", "command": "…", "args": […], "env": {…}}: one server',
  '{"mcpServers": {"github": {"url": "https://…"}, "git": {"command": "…", "args": […]}}}: a Claude Desktop or Cursor config',
  '{"github": {"url": "https://…"}, "git": {"command": "…"}}: the same map without mcpServers',
] as const;

/** Top-level fields whose plain value marks a body as one server, not a map of servers. */
const SERVER_FIELDS = ['name', 'command', 'url', 'transport', 'type'] as const;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Tells a single server from a pasted config and turns each pasted entry into a single body:
 * the map's key is its name (a `name` inside the entry is ignored), `disabled: true` entries are
 * skipped, everything else (`type`, `url`, `headers`, `command`, `args`, `env`, …) is passed on
 * for parseMcpServer to judge, as for one POST.
 */
export function readMcpPaste(body: unknown): McpPasteReading {
  if (!isRecord(body)) return { shape: 'server' };
  if (SERVER_FIELDS.some((field) => body[field] !== undefined && !isRecord(body[field]))) return { shape: 'server' };

  let map: Record<string, unknown>;
  let shape: 'mcpServers' | 'map';
  if (body.mcpServers !== undefined) {
    if (!isRecord(body.mcpServers)) return unknownShape('mcpServers must be an object of servers by name');
    map = body.mcpServers;
    shape = 'mcpServers';
  } else {
    const values = Object.values(body);
    if (values.length === 0 || !values.every(isRecord)) return unknownShape('this body is neither one server nor a map of servers');
    map = body;
    shape = 'map';
  }
  const names = Object.keys(map);
  if (names.length === 0) return unknownShape('the config names no server');
  if (names.length > MAX_PASTED_SERVERS) return unknownShape(`the config names ${names.length} servers; paste at most ${MAX_PASTED_SERVERS} at once`);
  return { shape, entries: names.map((name) => pastedServer(name, map[name])) };
}

function pastedServer(name: string, entry: unknown): PastedServer {
  // Not an object: left to parseMcpServer, which answers "must be an object" as for one POST.
  if (!isRecord(entry)) return { name, body: entry as Record<string, unknown> };
  if (entry.disabled === true) return { name, skipped: 'disabled in the pasted config ("disabled": true); enable it there, or POST it alone, to add it' };
  return { name, body: { ...entry, name } };
}

function unknownShape(why: string): McpPasteReading {
  return { shape: 'unknown', message: `Not an MCP server config: ${why}. Accepted: ${ACCEPTED_MCP_SHAPES.join('; ')}` };
}
