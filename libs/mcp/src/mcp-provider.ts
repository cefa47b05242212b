import type { RunNotice, RunToolProvider } from '#core/engine/run-tools.js';
import { toolSchemaVersion } from '#core/mcp/mcp-catalog-store.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import type { ToolCallRecord } from '#core/mcp/tool-call-audit.js';
import type { Caller } from '#core/auth/caller.js';
import type { AgentMiddleware } from '#core/engine/agent-middleware.js';
import { mcpGovernance, traceIdFor, type GovernedServer } from './mcp-governance.js';
import type { IntentClassifier } from './intent-classifier.js';
import { mcpInjection } from './mcp-injection.js';
import { McpAuthorizationRequired } from './mcp-errors.js';
import type { McpLease, McpPool, PoolScope } from './mcp-pool.js';
import { mcpTools } from './mcp-tools.js';

export interface McpProviderOptions {
  pool: McpPool;
  /** The operator's servers (DATAAGENT_MCP_CONFIG): one connection per worker shared by everyone (stdio ones: see `stdioPerUser`). */
  globalServers: readonly McpServerConfig[];
  /** A user's own servers; they extend the global ones and override one of the same name. */
  userServers: (caller: Caller) => Promise<McpServerConfig[]>;
  callTimeoutMs: number;
  /** Which MCP tools the caller's run may use (tool bindings of the assistant and the key); null: all. */
  bindings: (caller: Caller, assistantId: string) => Promise<((toolName: string) => boolean) | null>;
  /** Takes each MCP call's audit record. */
  audit: (record: ToolCallRecord) => void;
  /** Keep arguments and results in the audit, not only sizes and hashes. */
  auditPayloads: boolean;
  /** `intent`: only tools the message points at go into the prompt (layered); `all`: every tool, full schema, every turn. */
  injection: 'intent' | 'all';
  /** The model reads tools from the prompt (DATAAGENT_TOOL_PROMPT), not from native function definitions. */
  textTools: boolean;
  /** Layer 2 for messages the rules leave unsure; absent: off. */
  classifier?: IntentClassifier;
  /** Global stdio servers run once per user (in that user's sandbox), not once per worker for everyone. */
  stdioPerUser?: boolean;
  logger: { warn(obj: object, msg: string): void };
}

/** The servers a caller gets: global ones, extended or overridden by name by the user's own. */
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
  return async ({ caller, runId, sessionId, assistantId, traceId, features }) => {
    // Before the servers are read: a release that comes while they are read, or before they are
    // acquired, is not outlived by a connection made with what was read (see McpPool.acquire).
    const configReadAt = options.pool.mark();
    const [own, allowed] = await Promise.all([
      options.userServers(caller).catch((err: unknown) => {
        options.logger.warn({ run_id: runId, err }, "could not read the user's MCP servers; the run gets the global ones");
        return [];
      }),
      // Fails closed: a run whose bindings cannot be read gets no MCP tool.
      options.bindings(caller, assistantId).catch((err: unknown) => {
        options.logger.warn({ run_id: runId, err }, 'could not read the tool bindings; the run gets no MCP tool');
        return () => false;
      }),
    ]);
    // A server the tenant switched off is never connected (its tools are refused by the run's feature gate).
    const servers = serversFor(options.globalServers, own).filter(({ config }) => features?.mcpServer(config.name) ?? true);
    const userScope: PoolScope = { kind: 'user', tenantId: caller.tenantId, userId: caller.userId };
    const leases: Array<{ config: McpServerConfig; lease: McpLease }> = [];
    const governed = new Map<string, GovernedServer>();
    const notices: RunNotice[] = [];
    await Promise.all(
      servers.map(async ({ config, own: isOwn }) => {
        try {
          const perUser = isOwn || (options.stdioPerUser === true && config.transport === 'stdio');
          const lease = await options.pool.acquire(perUser ? userScope : { kind: 'global' }, config, { configReadAt });
          leases.push({ config, lease });
          governed.set(config.name, { schemaVersions: new Map(lease.connection.catalog.tools.map((t) => [t.name, toolSchemaVersion(t)])) });
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          if (err instanceof McpAuthorizationRequired) {
            notices.push({
              errorCode: 'mcp_sign_in_required',
              mcpServer: config.name,
              message: `The MCP server ${config.name} needs you to sign in (${err.detail}); its tools are left out until you do. Sign in from the MCP tab, or follow authorize_url in GET /api/v1/users/${caller.userId}/mcp-servers.`,
            });
          }
          governed.set(config.name, { unavailable: reason, schemaVersions: new Map() });
          options.logger.warn({ run_id: runId, server: config.name, reason }, 'MCP server unavailable; its tools are left out of this run');
        }
      }),
    );
    leases.sort((a, b) => a.config.name.localeCompare(b.config.name));
    const tools = leases.flatMap(({ config, lease }) => mcpTools(config, lease, options.callTimeoutMs));
    const offered = allowed ? tools.filter((t) => allowed(t.name)) : tools;
    const run = { traceId: traceId ?? traceIdFor(runId), tenantId: caller.tenantId, userId: caller.userId, sessionId, runId, agentId: assistantId, ...(caller.keyId ? { apiKeyId: caller.keyId } : {}) };
    const middleware: AgentMiddleware[] = [];
    if (notices.length > 0) middleware.push(signInNote(notices.map((n) => n.mcpServer!)));
    if (governed.size > 0) middleware.push(mcpGovernance({ run, servers: governed, allowed, audit: options.audit, payloads: options.auditPayloads, schemas: new Map(offered.map((t) => [t.name, t.parameters])) }));
    if (options.injection === 'intent' && offered.length > 0) {
      const intentServers = leases.map(({ config }) => ({
        name: config.name,
        triggerKeywords: config.triggerKeywords,
        tools: offered.filter((t) => t.name.startsWith(`${config.name}.`)).map((t) => t.name.slice(config.name.length + 1)),
      }));
      const specs = new Map(offered.map((t) => [t.name, { name: t.name, description: t.description, parameters: t.parameters }]));
      const describeServers = leases.map(({ config }) => ({ name: config.name, description: config.description, triggerKeywords: config.triggerKeywords }));
      middleware.push(mcpInjection({ servers: intentServers, specs, textTools: options.textTools, classifier: options.classifier, describeServers }));
    }
    return {
      // A tool the bindings do not allow is never offered.
      tools: offered,
      middleware,
      notices,
      release: async () => {
        for (const { lease } of leases) lease.release();
      },
    };
  };
}

/**
 * Tells the model which servers wait for the person to sign in, so that it says so instead of
 * guessing why a tool it expected is missing.
 */
function signInNote(servers: string[]): AgentMiddleware {
  const note = `The MCP server${servers.length > 1 ? 's' : ''} ${servers.join(', ')} need${servers.length > 1 ? '' : 's'} the person to sign in before ${servers.length > 1 ? 'their' : 'its'} tools can be used. If the request needs ${servers.length > 1 ? 'them' : 'it'}, tell the person to sign in from the MCP tab.`;
  return {
    name: 'mcp-sign-in-note',
    beforeModel(state) {
      if (state.messages.some((m) => m.role === 'system' && m.content === note)) return;
      // After the assistant's own system prompt, before the conversation.
      const at = state.messages.findIndex((m) => m.role !== 'system');
      state.messages.splice(at === -1 ? state.messages.length : at, 0, { role: 'system', content: note });
    },
  };
}
