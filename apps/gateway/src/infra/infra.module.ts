import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { SecretCipher } from '#core/secrets/secret-cipher.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { TenantDirectory } from '#core/tenants/tenant-directory.js';
import { BudgetDirectory } from '#core/tenants/budget-directory.js';
import { RedisRunBudgets } from '#transport/run-budgets.js';
import { createConversationStore } from '#persistence/create-conversation-store.js';
import { MysqlConversationStore } from '#persistence/mysql-conversation-store.js';
import { Metrics } from '#telemetry/metrics.js';
import { createRedis, failFast, type RedisClient } from '#transport/redis-connection.js';
import { ControlBus } from '#transport/control-bus.js';
import { ElicitationRequests } from '#transport/elicitation-requests.js';
import { HitlRequests } from '#transport/hitl-requests.js';
import { RunEventLog } from '#transport/run-event-log.js';
import { RunLifecycle } from '#core/run/run-lifecycle.js';
import type { RunLogger } from '#core/run/run-ports.js';
import { RedisRunLedger } from '#transport/run-ledger.js';
import { TenantRunSlots } from '#transport/tenant-run-slots.js';
import { RunQueue } from '#transport/run-queue.js';
import { SessionAdmission } from '#transport/session-admission.js';
import { RunEventRelay } from '#transport/run-event-relay.js';
import { openTransport, type Transport } from '#transport/transport.js';
import { UserEventBus } from '#transport/user-event-bus.js';
import type { GatewaySettings } from './gateway-config.js';
import { queueMetrics } from '../metrics/queue-metrics.js';
import { OriginPolicy } from './origin-policy.js';
import { CONTROL_REDIS, QUEUE_REDIS, REDIS, SETTINGS, STOP_TRACING, STORE, TENANTS, TRANSPORT } from './tokens.js';

/** Connections the gateway holds: Redis (commands, one subscriber for run and user events), the queue, the store. */
@Global()
@Module({})
export class InfraModule implements OnApplicationShutdown {
  constructor(
    @Inject(TRANSPORT) private readonly transport: Transport,
    @Inject(CONTROL_REDIS) private readonly control: RedisClient,
    @Inject(QUEUE_REDIS) private readonly queueRedis: RedisClient,
    @Inject(STORE) private readonly store: ConversationStore,
    private readonly queue: RunQueue,
    @Inject(STOP_TRACING) private readonly stopTracing: (() => Promise<void>) | null,
  ) {}

  /** @param stopTracing Flushes and stops the trace exporter at shutdown; null when tracing is off. */
  static forRoot(settings: GatewaySettings, stopTracing: (() => Promise<void>) | null = null): DynamicModule {
    const { redis } = settings;
    return {
      module: InfraModule,
      providers: [
        { provide: STOP_TRACING, useValue: stopTracing },
        { provide: SETTINGS, useValue: settings },
        // Requests fail fast (503) while Redis is down instead of waiting for it.
        { provide: TRANSPORT, useFactory: () => openTransport(redis, { commands: 'gateway', subscriber: 'gateway-subscriber' }, failFast()) },
        { provide: REDIS, inject: [TRANSPORT], useFactory: (t: Transport) => t.redis },
        {
          provide: STORE,
          useFactory: () => createConversationStore(settings.store.sessionStore, settings.mysql, { cipher: SecretCipher.fromSetting(settings.secrets.secretKey) }),
        },
        { provide: RunEventLog, inject: [TRANSPORT], useFactory: (t: Transport) => t.log },
        { provide: RunEventRelay, inject: [TRANSPORT], useFactory: (t: Transport) => t.relay },
        // BullMQ defines its ~65 scripts on the connection it is given, and ioredis copies every
        // script of a connection onto each auto-pipelined batch: on the command connection that
        // cost ~60 µs per event-loop turn with commands.
        { provide: QUEUE_REDIS, useFactory: () => createRedis(redis, 'gateway-queue', failFast()) },
        { provide: RunQueue, inject: [QUEUE_REDIS], useFactory: (r: RedisClient) => new RunQueue(r, redis.queueName) },
        {
          provide: RunLifecycle,
          inject: [RunEventLog, RunQueue, STORE, REDIS, HitlRequests],
          useFactory: (log: RunEventLog, queue: RunQueue, store: ConversationStore, r: RedisClient, hitl: HitlRequests) =>
            // The ledger's lifetime is the workers' (an unfinished run's log); the gateway only reads parked waits and claims nothing.
            new RunLifecycle({ log, jobs: queue, rows: store, slots: new TenantRunSlots(r), ledger: new RedisRunLedger(r, 24 * 3600), hitl, logger: lifecycleLogger() }),
        },
        // Its own connection: cancels and approvals never wait behind other commands' replies.
        { provide: CONTROL_REDIS, useFactory: () => createRedis(redis, 'gateway-control', failFast()) },
        { provide: ControlBus, inject: [CONTROL_REDIS], useFactory: (r: RedisClient) => new ControlBus(r) },
        // On the relay's subscriber: one subscribed connection per gateway.
        { provide: UserEventBus, inject: [TRANSPORT], useFactory: (t: Transport) => new UserEventBus(t.redis, t.subscriber) },
        // Decides requests, never opens them: their lifetime is the workers' setting.
        { provide: HitlRequests, inject: [REDIS], useFactory: (r: RedisClient) => new HitlRequests(r) },
        { provide: ElicitationRequests, inject: [REDIS], useFactory: (r: RedisClient) => new ElicitationRequests(r) },
        { provide: OriginPolicy, useValue: originPolicyFor(settings) },
        { provide: SessionAdmission, inject: [REDIS], useFactory: (r: RedisClient) => new SessionAdmission(r) },
        { provide: TENANTS, inject: [STORE], useFactory: (store: ConversationStore) => gatewayTenants(settings, store) },
        { provide: BudgetDirectory, inject: [STORE, TENANTS], useFactory: (store: ConversationStore, tenants: TenantDirectory) => new BudgetDirectory(store.budgets, tenants, { cacheMs: settings.tenancy.tenantCacheSeconds * 1000 }) },
        { provide: RedisRunBudgets, inject: [REDIS], useFactory: (r: RedisClient) => new RedisRunBudgets(r) },
        { provide: Metrics, inject: [RunQueue, STORE], useFactory: gatewayMetrics },
      ],
      exports: [SETTINGS, REDIS, STORE, TENANTS, BudgetDirectory, RedisRunBudgets, Metrics, RunEventLog, RunEventRelay, RunQueue, RunLifecycle, ControlBus, UserEventBus, HitlRequests, ElicitationRequests, OriginPolicy, SessionAdmission],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close().catch(() => undefined);
    await Promise.all([this.transport.close(), this.control.quit().catch(() => undefined), this.queueRedis.quit().catch(() => undefined)]);
    await this.store.close().catch(() => undefined);
    await this.stopTracing?.();
  }
}

/**
 * This gateway's metrics, recorded whether or not `/metrics` is served. Each scrape adds the
 * queue's job counts by state (BullMQ's own export: the queue depth) and the MySQL pool.
 */
function gatewayMetrics(queue: RunQueue, store: ConversationStore): Metrics {
  const metrics = new Metrics();
  metrics.appendOnScrape(() => queueMetrics(queue.queue));
  metrics.samplePool('mysql', () => (store instanceof MysqlConversationStore ? store.poolStats() : null));
  return metrics;
}

/** Tenants' limits on this gateway: their own in multi-tenant mode, the environment's otherwise. */
function gatewayTenants(settings: GatewaySettings, store: ConversationStore): TenantDirectory {
  const { server, mcp, tenancy, tenantRunLimit } = settings;
  return new TenantDirectory(
    tenancy.multiTenant ? store.tenants : null,
    {
      maxUsers: tenancy.maxUsersPerTenant,
      maxSessionsPerUser: server.maxSessionsPerUser,
      maxMcpServers: mcp.maxServersPerUser,
      // Workspaces are the workers' business; the gateway never checks this one.
      workspaceQuotaBytes: 0,
      maxConcurrentRuns: tenantRunLimit,
      requestsPerMinute: server.requestsPerMinute,
    },
    { cacheMs: tenancy.tenantCacheSeconds * 1000 },
  );
}

export function originPolicyFor(settings: GatewaySettings): OriginPolicy {
  const { authDisabled, corsOrigins, allowedHosts } = settings.server;
  return new OriginPolicy({ authDisabled, corsOrigins, allowedHosts });
}

/** The lifecycle's warnings (a slot it could not give back), through Nest's logger like the gateway's others. */
function lifecycleLogger(): RunLogger {
  const logger = new Logger('run-lifecycle');
  return { warn: (fields, msg) => logger.warn({ msg, ...fields }), error: (fields, msg) => logger.error({ msg, ...fields }) };
}
