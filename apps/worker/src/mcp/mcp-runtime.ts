import { existsSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { RedisClient } from '#transport/redis-connection.js';
import type { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import type { McpConfig } from '#core/mcp/user-server-config.js';
import type { RunToolProvider } from '#core/engine/run-tools.js';
import { GLOBAL_MCP_OWNER, type McpCatalogOwner, type McpCatalogStore } from '#core/mcp/mcp-catalog-store.js';
import { parseMcpConfigFile, takesPersonalSignIn, type McpServerConfig } from '#core/mcp/mcp-config.js';
import type { McpServerStore } from '#core/mcp/mcp-server-store.js';
import { bindingMatcher, type ToolBinding, type ToolBindingStore } from '#core/mcp/tool-bindings.js';
import type { ToolCallAuditStore, ToolCallRecord } from '#core/mcp/tool-call-audit.js';
import { matchStdioServer, parseStdioAllowlist } from '#core/mcp/stdio-allowlist.js';
import { stdioRefusal } from '#core/mcp/user-server-policy.js';
import type { Caller } from '#core/auth/caller.js';
import { installFolders, type Sandbox } from '#core/sandbox/sandbox.js';
import { findExecutable } from '#core/sandbox/sandbox-setup.js';
import type { Workspace } from '#core/workspace/workspace.js';
import type { McpConnection } from '#mcp/mcp-connection.js';
import { McpPool, type PoolScope } from '#mcp/mcp-pool.js';
import { poolOptionsFor } from '#mcp/mcp-pool-options.js';
import { mcpToolProvider } from '#mcp/mcp-provider.js';
import type { McpServerStatus } from '#transport/mcp-status.js';
import type { ChatModel } from '#core/llm/chat-model.js';
import { llmIntentClassifier } from '#mcp/intent-classifier.js';
import { announceMcpRelease, listenMcpReleases } from '#transport/mcp-release.js';
import type { McpConfigChangedEvent, UserEventMessage } from '#transport/user-event-bus.js';
import type { McpOAuthStore } from '#core/mcp/mcp-oauth-store.js';
import { McpOAuthSession, oauthFetch, type RefreshLock } from '#mcp/oauth/mcp-oauth-session.js';
import { policyFetch } from '#mcp/pinned-fetch.js';
import { redisKeys } from '#transport/redis-keys.js';
import { ToolCallAuditWriter } from './tool-call-audit-writer.js';

/** How often a worker checks whether the users it holds MCP connections for changed their servers. */
const CONFIG_SWEEP_MS = 3_000;

/** Seconds a published status lives unless a worker refreshes it. */
const STATUS_TTL_SECONDS = 300;

export interface McpRuntime {
  pool: McpPool;
  provider: RunToolProvider;
  globalServers: McpServerConfig[];
  close(): Promise<void>;
}

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface McpRuntimeOptions {
  config: McpRuntimeConfig;
  /** Users' servers: the per-user cap, and the stdio commands they may still run. */
  userMcp: McpConfig;
  outboundAllowlist: readonly string[];
  redis: RedisClient;
  store: McpServerStore;
  /** Where each server's tool catalog is kept (`mcp_tools`). */
  catalogs: McpCatalogStore;
  /** The tenants' tool bindings, and where each MCP call's audit record goes. */
  toolBindings: ToolBindingStore;
  toolCalls: ToolCallAuditStore;
  /** The model reads tools from the prompt (DATAAGENT_TOOL_PROMPT). */
  textTools: boolean;
  /** The model Layer 2 asks (DATAAGENT_MCP_INTENT_CLASSIFIER); absent: Layer 2 is off. */
  classifierModel?: ChatModel;
  /** Also told of each MCP call's audit record (its trace span). */
  onAudit?: (record: ToolCallRecord) => void;
  /** People's sign-ins to OAuth-protected servers, and the lock that keeps their refreshes single-flight across workers. */
  oauth?: { store: McpOAuthStore; lock: RefreshLock };
  /** A connection for this alone, subscribed to the gateways' releases (a user's sessions ended, a server changed); closed with the runtime. */
  releases?: RedisClient;
  workerId: string;
  logger: Logger;
  /**
   * Where stdio servers run. In bubblewrap each runs per user, in that user's sandbox with the
   * user's workspace; with no sandbox in multi-tenant mode, users' own stdio servers are refused.
   */
  sandbox?: { sandbox: Sandbox; workspaceFor: (caller: Pick<Caller, 'tenantId' | 'userId'>) => Workspace; multiTenant: boolean; reason?: string };
}

/**
 * A worker's MCP side: the operator's servers from DATAAGENT_MCP_CONFIG, users' servers from the
 * store (reread when their config version in Redis moves), the pool, statuses published to
 * Redis for the gateway, catalogs stored in `mcp_tools`, and the provider that equips runs.
 * @throws Error when the config file cannot be read or is not JSON of a known shape.
 */
export async function createMcpRuntime({ config, userMcp, outboundAllowlist, redis, store, catalogs, toolBindings, toolCalls, releases, textTools, classifierModel, onAudit, workerId, logger, sandbox, oauth }: McpRuntimeOptions): Promise<McpRuntime> {
  const globalServers = config.configFile ? await loadConfigFile(config.configFile, logger) : [];
  const stdioAllow = parseStdioAllowlist(userMcp.stdioAllow);
  const writeStatus = (owner: { tenantId: string; userId: string }, name: string, status: McpServerStatus) => {
    const key = redisKeys.mcpStatus(owner.tenantId, owner.userId);
    redis
      .multi()
      .hset(key, name, JSON.stringify(status))
      .expire(key, STATUS_TTL_SECONDS)
      .exec()
      .catch(() => undefined);
  };
  // The catalog version each (owner, server) was last stored with: an unchanged catalog is not written again.
  const savedCatalogs = new Map<string, string>();
  const saveCatalog = (owner: McpCatalogOwner, connection: McpConnection) => {
    const { version, partial, tools } = connection.catalog;
    const key = JSON.stringify([owner.tenantId, owner.userId, connection.config.name]);
    if (savedCatalogs.get(key) === version) return;
    savedCatalogs.set(key, version);
    if (savedCatalogs.size > 10_000) savedCatalogs.delete(savedCatalogs.keys().next().value!);
    catalogs.save(owner, connection.config.name, { version, partial, tools }).catch((err: unknown) => {
      savedCatalogs.delete(key);
      logger.warn({ server: connection.config.name, err: err instanceof Error ? err.message : String(err) }, 'could not store an MCP tool catalog; the next connection tries again');
    });
  };
  // The (user, server) pairs this worker last saw waiting for sign-in: their sockets hear of it once.
  const waitingForSignIn = new Set<string>();
  const publish = (scope: PoolScope, connection: McpConnection) => {
    const owner = scope.kind === 'global' ? GLOBAL_MCP_OWNER : scope;
    if (connection.connected && connection.catalog.version) saveCatalog(owner, connection);
    if (scope.kind === 'user') {
      const key = JSON.stringify([scope.tenantId, scope.userId, connection.config.name]);
      if (connection.status !== 'needs_authorization') waitingForSignIn.delete(key);
      else if (!waitingForSignIn.has(key)) {
        waitingForSignIn.add(key);
        if (waitingForSignIn.size > 10_000) waitingForSignIn.delete(waitingForSignIn.values().next().value!);
        const event: McpConfigChangedEvent = { event_type: 'mcp_config_changed', server_name: connection.config.name, change: 'needs_authorization', timestamp: new Date().toISOString() };
        const message: UserEventMessage = { tenant_id: scope.tenantId, user_id: scope.userId, event };
        redis.publish(redisKeys.userEventsChannel, JSON.stringify(message)).catch(() => undefined);
      }
    }
    writeStatus(owner, connection.config.name, {
      status: connection.status,
      last_error: connection.lastError ?? null,
      tool_count: connection.catalog.tools.length,
      last_check: (connection.lastCheck ?? new Date()).toISOString(),
      worker_id: workerId,
    });
  };
  const sandboxed = sandbox?.sandbox.kind === 'bwrap' ? sandbox : undefined;
  const operatorServers = new Set<McpServerConfig>(globalServers);
  /** Whether a user's server runs with arguments the operator pinned on the allowlist entry that lets it run. */
  const pinnedByOperator = async (server: McpServerConfig, path: string) => {
    const match = await matchStdioServer(server, stdioAllow, path);
    return match.ok && match.entry.args !== undefined;
  };
  const poolOptions = poolOptionsFor(config, userMcp.maxServersPerUser, outboundAllowlist);
  // The authorization server's token endpoint is reached under the same outbound policy as the server.
  const tokenFetch = poolOptions.checkUrl ? policyFetch(poolOptions.checkUrl) : undefined;
  const pool = new McpPool({
    ...poolOptions,
    onStatus: publish,
    // Servers may ask a run's person during a call: the run's tool calls answer (McpConnection.callTool).
    elicitation: true,
    // A user's remote server is signed in to with their own OAuth sign-in, unless their config sends a static Authorization header.
    ...(oauth
      ? {
          authorizeFetch: (scope, server) => {
            if (scope.kind !== 'user' || !takesPersonalSignIn(server)) return undefined;
            const session = new McpOAuthSession({
              owner: { tenantId: scope.tenantId, userId: scope.userId },
              server: server.name,
              store: oauth.store,
              lock: oauth.lock,
              ...(tokenFetch ? { fetchFn: tokenFetch } : {}),
              onRefresh: (outcome) => logger.info({ tenant_id: scope.tenantId, user_id: scope.userId, server: server.name, outcome }, 'MCP sign-in refresh'),
              // Every worker lets go of its connection made with the sign-in, and records that the server waits for the person.
              onForgotten: () => {
                void announceMcpRelease(redis, [{ tenant_id: scope.tenantId, user_id: scope.userId, server_name: server.name, reason: 'signed_out' }]).catch(() => undefined);
              },
            });
            return (base) => oauthFetch(base, session, server.name);
          },
        }
      : {}),
    // The server sees the system's runtime, its install folder, what the operator granted it, and the user's workspace.
    ...(sandboxed
      ? {
          launchStdio: (scope, server) => async (command) => {
            const workspace = await sandboxed.workspaceFor(scope).ensure();
            const resolved = findExecutable(command.command, command.env.PATH) ?? command.command;
            const user = sandboxed.sandbox.userFor?.(scope.tenantId, scope.userId);
            // What is mounted is the operator's choice, never a user's: a user's arguments name
            // folders too (`/`, the data folder), so only the vetted command's own folders count,
            // and its arguments only when the operator wrote them (their config, or arguments the
            // allowlist pinned).
            const operatorArgs = operatorServers.has(server) || (await pinnedByOperator(server, command.env.PATH ?? ''));
            const real = realPathOf(resolved);
            return sandboxed.sandbox.spawn({
              ...command,
              // The worker's HOME is not in the sandbox: the server's home is the user's workspace.
              env: { ...command.env, HOME: workspace, TMPDIR: '/tmp' },
              workspace,
              ...(user ? { user } : {}),
              tenantId: scope.tenantId,
              readOnly: [...installFolders(resolved, [real, ...(operatorArgs ? command.args : [])], existsSync), ...(server.sandbox?.readOnly ?? [])],
              ...(server.sandbox?.readWrite ? { readWrite: server.sandbox.readWrite } : {}),
              ...(server.sandbox?.network ? { network: true } : {}),
            }, ['pipe', 'pipe', 'pipe']);
          },
        }
      : {}),
  });
  const noSandboxRefusal =
    sandbox && !sandboxed && sandbox.multiTenant
      ? `stdio servers of users run only in the sandbox in multi-tenant mode, and this worker has none (${sandbox.reason ?? 'DATAAGENT_SANDBOX=none'})`
      : undefined;

  // A user's servers are read again only when the gateway has raised their config version.
  const cache = new Map<string, { version: string; servers: McpServerConfig[] }>();
  const userServers = async (caller: Pick<Caller, 'tenantId' | 'userId'>): Promise<McpServerConfig[]> => {
    const key = `${caller.tenantId}:${caller.userId}`;
    const version = (await redis.get(redisKeys.mcpConfigVersion(caller.tenantId, caller.userId))) ?? '0';
    const cached = cache.get(key);
    if (cached?.version === version) return cached.servers;
    const servers: McpServerConfig[] = [];
    for (const server of await store.list(caller.tenantId, caller.userId)) {
      // Not connected, and the status says why: secrets this worker cannot open, or a stdio
      // command (or env name) the operator does not allow users here, judged by this worker's
      // own files and PATH.
      const refusal = server.unreadableSecrets
        ? `its secret values (${server.unreadableSecrets.join(', ')}) cannot be decrypted with this worker's DATAAGENT_SECRET_KEY; set them again`
        : server.config.transport === 'stdio' && noSandboxRefusal
          ? noSandboxRefusal
          : (await stdioRefusal(server.config, stdioAllow))?.reason;
      if (refusal === undefined) {
        servers.push(server.config);
        continue;
      }
      if (server.config.disabled) continue;
      writeStatus(caller, server.config.name, { status: 'error', last_error: refusal, tool_count: 0, last_check: new Date().toISOString(), worker_id: workerId });
      logger.warn({ tenant_id: caller.tenantId, user_id: caller.userId, server: server.config.name }, `MCP server not connected: ${refusal}`);
    }
    cache.set(key, { version, servers });
    if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
    return servers;
  };

  if (releases) {
    await listenMcpReleases(releases, (message) => {
      const scope: PoolScope = { kind: 'user', tenantId: message.tenant_id, userId: message.user_id };
      void pool.closeScope(scope, message.server_name).then((closed) => {
        // Closing wrote `disconnected`; after a sign-out the server waits for the person.
        if (message.reason === 'signed_out' && message.server_name && closed > 0) {
          writeStatus(scope, message.server_name, { status: 'needs_authorization', last_error: 'signed out', tool_count: 0, last_check: new Date().toISOString(), worker_id: workerId });
        }
        // Every worker hears every release; one that holds none of the connections says so too (releases are rare: a user's last session, a changed server).
        logger.info({ tenant_id: message.tenant_id, user_id: message.user_id, server: message.server_name, reason: message.reason, closed }, closed > 0 ? 'MCP connections released' : 'MCP release heard, no connection of it here');
      });
    });
  }

  // Releases are pub/sub, at most once: a worker whose subscriber was disconnected when one was
  // published (a Redis restart, a network cut; it resubscribes, but what was sent meanwhile is
  // lost) never hears of it. This sweep is for that worker alone: it reads the config version of
  // every user it holds connections for, and when it moved since the sweep last looked keeps only
  // the connections of their servers now. (A run's acquire racing a release it did hear is the
  // pool's to handle, see McpPool.acquire.) It compares with the version it last swept at, not
  // with the cache: a run that reread the servers since the missed release moved the cache on
  // while the old connection was still pooled.
  const swept = new Map<string, string>();
  let sweeping = false;
  const sweepChangedConfigs = async () => {
    const scopes = pool.userScopes();
    if (sweeping || scopes.length === 0) return;
    sweeping = true;
    try {
      // One GET per user rather than an MGET: each user's keys live in a slot of their own on a cluster (auto-pipelining sends them together anyway).
      const versions = await Promise.all(scopes.map((scope) => redis.get(redisKeys.mcpConfigVersion(scope.tenantId, scope.userId))));
      for (const [i, scope] of scopes.entries()) {
        const key = `${scope.tenantId}:${scope.userId}`;
        const version = versions[i] ?? '0';
        if (!swept.has(key)) {
          // Connections made since the worker started were made with a version at least this one.
          swept.set(key, cache.get(key)?.version ?? version);
          if (swept.size > 10_000) swept.delete(swept.keys().next().value!);
        }
        if (swept.get(key) === version) continue;
        // Global stdio servers run per user in the sandbox: their connections are the user's too, and stay.
        const closed = await pool.retain(scope, [...globalServers, ...(await userServers(scope))]);
        swept.set(key, version);
        if (closed > 0) logger.info({ tenant_id: scope.tenantId, user_id: scope.userId, closed }, 'MCP connections of a changed config released');
      }
    } catch (err) {
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not check users\' MCP config versions; the next sweep tries again');
    } finally {
      sweeping = false;
    }
  };
  const configSweep = setInterval(() => void sweepChangedConfigs(), CONFIG_SWEEP_MS);
  configSweep.unref();

  // A tenant's bindings are read again only when the gateway has raised their version.
  const bindingCache = new Map<string, { version: string; bindings: ToolBinding[] }>();
  const bindings = async (caller: Caller, assistantId: string) => {
    const version = (await redis.get(redisKeys.toolBindingsVersion(caller.tenantId))) ?? '0';
    let cached = bindingCache.get(caller.tenantId);
    if (cached?.version !== version) {
      cached = { version, bindings: await toolBindings.list(caller.tenantId) };
      bindingCache.set(caller.tenantId, cached);
      if (bindingCache.size > 10_000) bindingCache.delete(bindingCache.keys().next().value!);
    }
    return bindingMatcher(cached.bindings, { agentId: assistantId, apiKeyId: caller.keyId });
  };
  const audit = new ToolCallAuditWriter(toolCalls, logger);

  const provider = mcpToolProvider({
    pool,
    globalServers,
    userServers,
    bindings,
    audit: (record) => {
      audit.add(record);
      onAudit?.(record);
    },
    auditPayloads: config.auditPayloads,
    injection: config.toolInjection,
    textTools,
    ...(config.intentClassifier && classifierModel ? { classifier: llmIntentClassifier(classifierModel) } : {}),
    callTimeoutMs: config.callTimeoutMs,
    stdioPerUser: sandboxed !== undefined,
    logger,
  });
  if (globalServers.length > 0) logger.info({ servers: globalServers.map((s) => s.name) }, 'MCP servers configured');
  const close = async () => {
    clearInterval(configSweep);
    await releases?.quit().catch(() => releases.disconnect());
    await pool.close();
    await audit.close();
  };
  return { pool, provider, globalServers, close };
}

/** A command's real path (links followed), or the path itself when it cannot be followed. */
function realPathOf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

async function loadConfigFile(file: string, logger: Logger): Promise<McpServerConfig[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`DATAAGENT_MCP_CONFIG: cannot read ${file}: ${(err as Error).message}`);
  }
  const { servers, errors } = parseMcpConfigFile(text);
  if (errors.some((e) => e.field === '(file)')) throw new Error(`DATAAGENT_MCP_CONFIG ${file}: ${errors.map((e) => e.message).join('; ')}`);
  for (const error of errors) logger.warn({ file, field: error.field }, `MCP config: ${error.field} ${error.message}; that server is left out`);
  return servers;
}
