import type { AgentMiddleware } from '#core/engine/agent-middleware.js';
import type { RunToolProvider } from '#core/engine/run-tools.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import type { Caller } from '#core/session/caller.js';
import type { McpLease, McpPool, PoolScope } from './mcp-pool.js';
import { mcpTools } from './mcp-tools.js';

export interface McpProviderOptions {
  pool: McpPool;
  /** The operator's servers (DATAAGENT_MCP_CONFIG): one connection per worker, shared by everyone. */
  globalServers: readonly McpServerConfig[];
  /** A user's own servers; they extend the global ones and override one of the same name. */
  userServers: (caller: Caller) => Promise<McpServerConfig[]>;
  callTimeoutMs: number;
  logger: { warn(obj: object, msg: string): void };
}

/** The servers a caller gets: global ones, extended or overridden by name by the user's own (Req 30.5). */
export function serversFor(globalServers: readonly McpServerConfig[], own: readonly McpServerConfig[]): Array<{ config: McpServerConfig; own: boolean }> {
  const byName = new Map<string, { config: McpServerConfig; own: boolean }>();
  for (const config of globalServers) byName.set(config.name, { config, own: false });
  for (const config of own) byName.set(config.name, { config, own: true });
  return [...byName.values()].filter(({ config }) => !config.disabled);
}

/**
 * Equips each run with the tools of the caller's MCP servers, through the worker's pool. A
 * server that cannot be reached is left out (its status says why): only running servers offer
 * tools, and the run goes on. The run holds its leases until it ends.
 */
export function mcpToolProvider(options: McpProviderOptions): RunToolProvider {
  return async ({ caller, runId }) => {
    const own = await options.userServers(caller).catch((err: unknown) => {
      options.logger.warn({ run_id: runId, err }, "could not read the user's MCP servers; the run gets the global ones");
      return [];
    });
    const servers = serversFor(options.globalServers, own);
    const userScope: PoolScope = { kind: 'user', tenantId: caller.tenantId, userId: caller.userId };
    const leases: Array<{ config: McpServerConfig; lease: McpLease }> = [];
    const unavailable = new Map<string, string>();
    await Promise.all(
      servers.map(async ({ config, own: isOwn }) => {
        try {
          leases.push({ config, lease: await options.pool.acquire(isOwn ? userScope : { kind: 'global' }, config) });
        } catch (err) {
          unavailable.set(config.name, err instanceof Error ? err.message : String(err));
          options.logger.warn({ run_id: runId, server: config.name, reason: err instanceof Error ? err.message : String(err) }, 'MCP server unavailable; its tools are left out of this run');
        }
      }),
    );
    leases.sort((a, b) => a.config.name.localeCompare(b.config.name));
    return {
      tools: leases.flatMap(({ config, lease }) => mcpTools(config, lease, options.callTimeoutMs)),
      middleware: unavailable.size > 0 ? [unavailableServers(unavailable)] : [],
      release: async () => {
        for (const { lease } of leases) lease.release();
      },
    };
  };
}

/**
 * Answers a call to a tool of a server that could not be reached for this run (the model may
 * know its tools from earlier turns) with the reason, instead of "Tool not found".
 */
function unavailableServers(reasons: ReadonlyMap<string, string>): AgentMiddleware {
  return {
    name: 'mcp-unavailable-servers',
    async wrapToolCall(call, ctx, next) {
      const [, server, tool] = call.name.match(/^([^.]+?)(?:\.|__)(.+)$/) ?? [];
      const reason = server === undefined ? undefined : reasons.get(server);
      if (reason === undefined) return next(call, ctx);
      const error = `The ${server} MCP server is unavailable for this turn, so ${server}.${tool} did not run: ${reason}. Trying again in a later turn may work.`;
      return { success: false, output: { retry: true }, error, status: 'error' };
    },
  };
}
