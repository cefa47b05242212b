import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import type { RunToolProvider } from '#core/engine/run-tools.js';
import { parseMcpConfigFile, type McpServerConfig } from '#core/mcp/mcp-config.js';
import { McpPool } from '#mcp/mcp-pool.js';
import { poolOptionsFor } from '#mcp/mcp-pool-options.js';
import { mcpToolProvider } from '#mcp/mcp-provider.js';

/** Thrown for an MCP config file that cannot be read or is not JSON of a known shape. */
export class McpConfigFileError extends Error {}

/** The local CLI's MCP servers: the provider that equips its runs, and the pool to close before exit. */
export interface LocalMcp {
  servers: McpServerConfig[];
  provider: RunToolProvider;
  close(): Promise<void>;
}

export interface LocalMcpOptions {
  config: McpRuntimeConfig;
  outboundAllowlist: readonly string[];
  /** The model reads tools from the prompt (DATAAGENT_TOOL_PROMPT). */
  textTools: boolean;
  /** One line for the person at the terminal (stderr). */
  warn: (line: string) => void;
}

/**
 * The file that names the local servers (Req 29): `--mcp-config PATH`, else
 * `~/.deepagents/{assistant_id}/mcp.json` when it exists (`$HOME` first, so tests can move it).
 */
export function localMcpConfigPath(flag: string | undefined, assistantId: string): string | undefined {
  if (flag) return flag;
  const file = join(process.env.HOME || homedir(), '.deepagents', assistantId, 'mcp.json');
  return existsSync(file) ? file : undefined;
}

/**
 * Reads the servers from `file` and sets up the worker's pool and provider for them, with one
 * owner (the local person) and no bindings or audit store. Servers connect when a run starts; one
 * that fails is warned about and left out, and the run goes on (Req 29.5).
 * @throws McpConfigFileError when the file cannot be read or has no known shape.
 */
export async function openLocalMcp(file: string, { config, outboundAllowlist, textTools, warn }: LocalMcpOptions): Promise<LocalMcp> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new McpConfigFileError(`cannot read the MCP config ${file}: ${(err as Error).message}`);
  }
  const { servers, errors } = parseMcpConfigFile(text);
  if (errors.some((e) => e.field === '(file)')) throw new McpConfigFileError(`MCP config ${file}: ${errors.map((e) => e.message).join('; ')}`);
  for (const error of errors) warn(`MCP config ${file}: ${error.field} ${error.message}; that server is left out`);
  // Local servers are the person's own: the per-user cap is the file's length.
  const pool = new McpPool(poolOptionsFor(config, Math.max(1, servers.length), outboundAllowlist));
  const provider = mcpToolProvider({
    pool,
    globalServers: servers,
    userServers: async () => [],
    bindings: async () => null,
    audit: () => undefined,
    auditPayloads: false,
    injection: config.toolInjection,
    textTools,
    callTimeoutMs: config.callTimeoutMs,
    logger: {
      warn: (obj: { server?: string; reason?: string }, msg: string) => warn(obj.server ? `MCP server ${obj.server} not connected: ${obj.reason ?? msg}` : msg),
    },
  });
  return { servers, provider, close: () => pool.close() };
}
