import { RedisRefreshLock } from '#transport/redis-refresh-lock.js';
import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { SecretCipher } from '#core/secrets/secret-cipher.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { TenantDirectory } from '#core/tenants/tenant-directory.js';
import { PriceDirectory } from '#core/usage/price-directory.js';
import { environmentPrices } from '#core/usage/pricing-config.js';
import { BudgetDirectory } from '#core/tenants/budget-directory.js';
import { RedisRunBudgets } from '#transport/run-budgets.js';
import { createConversationStore } from '#persistence/create-conversation-store.js';
import { createChatModel } from '#llm/create-chat-model.js';
import { Metrics } from '#telemetry/metrics.js';
import { AssistantModels } from '#transport/assistant-models.js';
import { createRedis, type RedisClient } from '#transport/redis-connection.js';
import { ElicitationRequests } from '#transport/elicitation-requests.js';
import { HitlRequests } from '#transport/hitl-requests.js';
import { RunEventLog } from '#transport/run-event-log.js';
import { WorkerRunLifecycle } from '#core/run/run-lifecycle.js';
import { RunEventRelay } from '#transport/run-event-relay.js';
import { RedisRunLedger } from '#transport/run-ledger.js';
import { ParkedRunDeadlines } from '#transport/parked-run-deadlines.js';
import { TenantRunSlots } from '#transport/tenant-run-slots.js';
import { RunQueue } from '#transport/run-queue.js';
import { isDatabaseUnavailable } from '#persistence/connection-errors.js';
import { openTransport, type Transport } from '#transport/transport.js';
import { approvalPolicy } from '#core/hitl/hitl-handler.js';
import { NoSandbox } from '#core/sandbox/sandbox.js';
import type { SandboxChoice } from '#core/sandbox/sandbox-setup.js';
import { WorkspaceRegistry } from '#core/workspace/workspace-registry.js';
import { memoryToolProvider } from '#core/memory/agent-memory-middleware.js';
import { DecisionWaiters } from './hitl/decision-waiters.js';
import { importDiskMemories } from './memory/import-disk-memories.js';
import { RedisElicitationHandler } from './hitl/redis-elicitation-handler.js';
import { RedisHitlHandler } from './hitl/redis-hitl-handler.js';
import { buildAgentFactory } from './agents/agent-factory.provider.js';
import { LOGGER, MCP, QUEUE_REDIS, REDIS, SETTINGS, STOP_TRACING, STORE, TENANTS, TRANSPORT } from './infra/tokens.js';
import { createMcpRuntime, type McpRuntime } from './mcp/mcp-runtime.js';
import { MetricsEndpoint } from './metrics/metrics-endpoint.js';
import { RunMetrics } from './metrics/run-metrics.js';
import type { WorkerSettings } from './infra/worker-config.js';
import { EventArchiver } from './runs/event-archiver.js';
import { PendingWrites } from './runs/pending-writes.js';
import { RunProcessor } from './runs/run.processor.js';
import { RunRunner } from './runs/run-runner.js';
import { RunTraces } from './tracing/run-traces.js';
import { WorkspaceArchiveScheduler } from './workspaces/workspace-archive.scheduler.js';
import type { RunLedger } from '#core/run/run-ports.js';

/** How long a worker's Redis command may wait (for a reconnection, say) before it fails. */
const WORKER_REDIS_COMMAND_TIMEOUT_MS = 5_000;

@Module({})
export class WorkerModule implements OnApplicationShutdown {
  constructor(
    @Inject(TRANSPORT) private readonly transport: Transport,
    @Inject(STORE) private readonly store: ConversationStore,
    @Inject(STOP_TRACING) private readonly stopTracing: (() => Promise<void>) | null,
  ) {}

  /** @param stopTracing Flushes and stops the trace exporter; null when tracing is off. */
  static forRoot(settings: WorkerSettings, logger: Logger, stopTracing: (() => Promise<void>) | null = null, sandbox: SandboxChoice = { sandbox: new NoSandbox(), reason: 'not chosen' }): DynamicModule {
    const traces = new RunTraces(stopTracing !== null);
    // Recorded whether or not they are served (DATAAGENT_METRICS_ENABLED): recording costs a counter's add.
    const metrics = new Metrics(true, { tenantLabel: settings.metrics.tenantLabel });
    const runMetrics = new RunMetrics(metrics, settings.metrics.tenantLabel);
    return {
      module: WorkerModule,
      providers: [
        { provide: STOP_TRACING, useValue: stopTracing },
        { provide: Metrics, useValue: metrics },
        { provide: SETTINGS, useValue: settings },
        { provide: LOGGER, useValue: logger },
        // Commands wait out a short Redis blip, then fail: a run whose writes fail is handed back
        // to the queue and continues from its ledger. Only BullMQ's blocking connection waits forever.
        // On the subscriber, runs waiting behind an earlier run of their session hear its done.
        {
          provide: TRANSPORT,
          useFactory: () =>
            openTransport(settings.redis, { commands: `worker-${settings.worker.workerId}`, subscriber: `worker-events-${settings.worker.workerId}` }, { commandTimeout: WORKER_REDIS_COMMAND_TIMEOUT_MS }),
        },
        { provide: REDIS, inject: [TRANSPORT], useFactory: (t: Transport) => t.redis },
        {
          provide: STORE,
          useFactory: () =>
            createConversationStore(settings.store.sessionStore, settings.mysql, {
              cipher: SecretCipher.fromSetting(settings.secrets.secretKey),
              memory: { retentionDays: settings.storage.memoryRetentionDays },
            }),
        },
        { provide: RunEventLog, inject: [TRANSPORT], useFactory: (t: Transport) => t.log },
        { provide: RunEventRelay, inject: [TRANSPORT], useFactory: (t: Transport) => t.relay },
        // Wakes parked runs and serves the reaper: BullMQ defines its scripts on the connection it is given, so not the command connection.
        { provide: QUEUE_REDIS, useFactory: () => createRedis(settings.redis, `worker-producer-${settings.worker.workerId}`) },
        { provide: RunQueue, inject: [QUEUE_REDIS], useFactory: (r: RedisClient) => new RunQueue(r, settings.redis.queueName) },
        {
          provide: WorkerRunLifecycle,
          inject: [RunEventLog, RunEventRelay, RunQueue, STORE, REDIS, RedisRunLedger, HitlRequests, PendingWrites, RedisRunBudgets],
          useFactory: (log: RunEventLog, relay: RunEventRelay, queue: RunQueue, store: ConversationStore, redis: RedisClient, ledger: RunLedger, hitl: HitlRequests, durable: PendingWrites, budgets: RedisRunBudgets) =>
            new WorkerRunLifecycle({ log, relay, jobs: queue, rows: store, slots: new TenantRunSlots(redis), ledger, hitl, deadlines: new ParkedRunDeadlines(redis, settings.redis.queueName), durable, databaseUnavailable: isDatabaseUnavailable, budgets, logger }),
        },
        { provide: RedisRunBudgets, inject: [REDIS], useFactory: (redis: RedisClient) => new RedisRunBudgets(redis) },
        {
          provide: BudgetDirectory,
          inject: [STORE, TENANTS],
          useFactory: (store: ConversationStore, tenants: TenantDirectory) => new BudgetDirectory(store.budgets, tenants, { cacheMs: settings.tenancy.tenantCacheSeconds * 1000 }),
        },
        {
          provide: EventArchiver,
          inject: [STORE],
          useFactory: (store: ConversationStore) =>
            new EventArchiver(store.events, (err, detail) => logger.error({ err, ...detail }, detail.dropped ? 'run events dropped from the archive' : 'event archive write failed; kept for retry')),
        },
        DecisionWaiters,
        {
          provide: PendingWrites,
          useFactory: () =>
            new PendingWrites((event, { name, pending, err }) => {
              if (event === 'written') logger.info({ write: name, pending }, 'stored a write the database had missed');
              else if (event === 'queued') logger.warn({ write: name, pending, err }, 'database unreachable; write kept for retry');
              else logger.error({ write: name, pending, err }, 'a kept write was dropped');
            }),
        },
        {
          provide: HitlRequests,
          inject: [REDIS],
          useFactory: (redis: RedisClient) => new HitlRequests(redis, Math.ceil(settings.worker.hitlTimeoutSeconds) + settings.redis.runLogTtlSeconds),
        },
        {
          provide: ElicitationRequests,
          inject: [REDIS],
          useFactory: (redis: RedisClient) => new ElicitationRequests(redis, Math.ceil(settings.worker.elicitationTimeoutSeconds) + settings.redis.runLogTtlSeconds),
        },
        // As long as an unfinished run's log (RunEventLog's active retention).
        { provide: RedisRunLedger, inject: [REDIS], useFactory: (redis: RedisClient) => new RedisRunLedger(redis, 24 * 3600) },
        {
          provide: MCP,
          inject: [REDIS, STORE, WorkspaceRegistry],
          useFactory: (redis: RedisClient, store: ConversationStore, workspaces: WorkspaceRegistry) =>
            createMcpRuntime({
              sandbox: { ...sandbox, workspaceFor: (caller) => workspaces.forCaller(caller), multiTenant: settings.tenancy.multiTenant },
              config: settings.mcp,
              userMcp: settings.userMcp,
              outboundAllowlist: settings.tools.outboundAllowlist,
              redis,
              store: store.mcpServers,
              oauth: { store: store.mcpOAuth, lock: new RedisRefreshLock(redis) },
              catalogs: store.mcpCatalog,
              toolBindings: store.toolBindings,
              toolCalls: store.toolCalls,
              textTools: settings.worker.toolPrompt,
              ...(settings.mcp.intentClassifier ? { classifierModel: createChatModel(settings.llm) } : {}),
              onAudit: (record) => {
                traces.mcpCall(record);
                runMetrics.mcpCall(record);
              },
              // Its own connection: a subscribed Redis connection takes no other commands.
              releases: createRedis(settings.redis, `worker-mcp-${settings.worker.workerId}`),
              workerId: settings.worker.workerId!,
              logger,
            }),
        },
        { provide: TENANTS, inject: [STORE], useFactory: (store: ConversationStore) => workerTenants(settings, store) },
        {
          // One per worker: a user's runs, MCP servers and sandboxed commands share its usage and write lock.
          provide: WorkspaceRegistry,
          inject: [TENANTS],
          useFactory: (tenants: TenantDirectory) =>
            new WorkspaceRegistry(
              { rootTemplate: settings.workspace.rootTemplate, quotaBytes: settings.workspace.quotaBytes },
              (tenantId) => tenants.peek(tenantId).limits.workspaceQuotaBytes,
              sandbox.ownerFor,
            ),
        },
        {
          provide: RunRunner,
          inject: [STORE, RunEventLog, RedisRunLedger, EventArchiver, HitlRequests, DecisionWaiters, MCP, TENANTS, REDIS, WorkerRunLifecycle, WorkspaceRegistry, ElicitationRequests, BudgetDirectory, RedisRunBudgets],
          useFactory: async (
            store: ConversationStore,
            log: RunEventLog,
            ledger: RunLedger,
            archiver: EventArchiver,
            requests: HitlRequests,
            waiters: DecisionWaiters,
            mcp: McpRuntime,
            tenants: TenantDirectory,
            redis: RedisClient,
            lifecycle: WorkerRunLifecycle,
            workspaces: WorkspaceRegistry,
            elicitations: ElicitationRequests,
            budgetDirectory: BudgetDirectory,
            budgetCounters: RedisRunBudgets,
          ) => {
            // An in-process store forgets at exit: notes stay on disk until a database keeps them.
            if (settings.store.sessionStore === 'mysql') await importDiskMemories(settings.storage.storageRoot, store.memories, logger);
            // A run reads its tenant's settings as it starts, so the quota is known by its first write.
            const agents = await buildAgentFactory(settings, approvalPolicy(settings.worker.hitlTools), (msg) => logger.warn({ skills_dir: settings.storage.skillsDir }, msg), { workspaces, sandbox });
            // GET /agents shows these: the gateway holds no LLM setting of its own.
            await new AssistantModels(redis, settings.redis.queueName).announce(new Map(agents.list().map((agent) => [agent.id, agent.model.id])));
            return new RunRunner({
              store,
              log,
              lifecycle,
              ledger,
              archiver,
              agents,
              workerId: settings.worker.workerId!,
              historyMaxBytes: settings.worker.historyMaxBytes,
              hitlFor: (caller, park) =>
                new RedisHitlHandler(requests, waiters, caller, { timeoutMs: settings.worker.hitlTimeoutSeconds * 1000, parkAfterMs: settings.worker.hitlParkAfterSeconds * 1000, park }),
              elicitationFor: (caller) => new RedisElicitationHandler(elicitations, waiters, caller, { timeoutMs: settings.worker.elicitationTimeoutSeconds * 1000 }),
              toolProviders: [memoryToolProvider(store.memories), mcp.provider],
              traces,
              metrics: runMetrics,
              tenants,
              prices: workerPrices(settings, store, logger),
              budgets: { directory: budgetDirectory, counters: budgetCounters },
              logger,
            });
          },
        },
        RunProcessor,
        WorkspaceArchiveScheduler,
        MetricsEndpoint,
      ],
    };
  }

  /** Runs after RunProcessor has drained (module hooks run after their providers'). */
  async onApplicationShutdown(): Promise<void> {
    await this.transport.close();
    await this.store.close().catch(() => undefined);
    await this.stopTracing?.();
  }
}

/** The price table each run's calls are priced from: the one operators stored, else the environment's; read again every DATAAGENT_PRICES_CACHE_SECONDS. */
function workerPrices(settings: WorkerSettings, store: ConversationStore, logger: Logger): PriceDirectory {
  return new PriceDirectory(store.prices, environmentPrices(settings.pricing), { cacheMs: settings.pricing.pricesCacheSeconds * 1000 }, (err) =>
    logger.warn({ err }, 'could not read the stored price table; the last one read stays in force'),
  );
}

/** Tenants' feature switches and workspace quotas on this worker: their own in multi-tenant mode, the environment's otherwise. */
function workerTenants(settings: WorkerSettings, store: ConversationStore): TenantDirectory {
  const none = { maxUsers: 0, maxSessionsPerUser: 0, maxConcurrentRuns: 0, requestsPerMinute: 0 };
  return new TenantDirectory(
    settings.tenancy.multiTenant ? store.tenants : null,
    { ...none, maxMcpServers: settings.userMcp.maxServersPerUser, workspaceQuotaBytes: settings.workspace.quotaBytes },
    { cacheMs: settings.tenancy.tenantCacheSeconds * 1000 },
  );
}
