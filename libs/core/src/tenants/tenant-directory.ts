import type { TenantFeatures, TenantLimits, TenantRecord, TenantStore } from './tenant.js';

/** The limits a tenant gets: its own where set, the deployment's otherwise. 0: no limit. */
export type EffectiveLimits = { [K in keyof TenantLimits]: number };

/** What the deployment's environment says, for tenants (or fields) without their own value. */
export type TenantDefaults = EffectiveLimits;

/** One tenant's limits and feature switches, as gateways and workers apply them. */
export interface TenantPolicy {
  tenantId: string;
  limits: EffectiveLimits;
  features: FeatureSwitch;
  /** Where the tenant's days and months start (its budgets' periods): an IANA zone, UTC by default. */
  timeZone: string;
}

/** Answers whether a tenant may use a tool, a skill or an MCP server. */
export class FeatureSwitch {
  static readonly ALL_ON = new FeatureSwitch({});
  /** Nothing optional: what a worker uses for a tenant whose settings it cannot read. */
  static readonly ALL_OFF = new FeatureSwitch({ tools: [], skills: [], mcp_servers: [], shell: false });

  private readonly tools?: ReadonlySet<string>;
  private readonly skills?: ReadonlySet<string>;
  private readonly servers?: ReadonlySet<string>;

  constructor(readonly features: TenantFeatures) {
    if (features.tools) this.tools = new Set(features.tools);
    if (features.skills) this.skills = new Set(features.skills);
    if (features.mcp_servers) this.servers = new Set(features.mcp_servers);
  }

  /** True when nothing is switched off. */
  get allOn(): boolean {
    return !this.tools && !this.skills && !this.servers && this.features.shell !== false;
  }

  /** A built-in or memory tool, by name; `shell` also needs `shell` not false. */
  tool(name: string): boolean {
    if (name === 'shell' && this.features.shell === false) return false;
    return !this.tools || this.tools.has(name);
  }

  skill(name: string): boolean {
    return !this.skills || this.skills.has(name);
  }

  mcpServer(name: string): boolean {
    return !this.servers || this.servers.has(name);
  }
}

export interface TenantDirectoryOptions {
  /** How long a tenant's settings are trusted before they are read again: a change applies everywhere within this. */
  cacheMs: number;
  now?: () => number;
}

/**
 * Each tenant's policy, read from `tenants` and kept briefly, so every gateway and worker
 * applies a change within `cacheMs` without a read per request. Without a store (one tenant,
 * DATAAGENT_MULTI_TENANT off) every tenant gets the environment's defaults.
 */
export class TenantDirectory {
  private readonly cache = new Map<string, { policy: TenantPolicy; readAt: number }>();
  private readonly reading = new Map<string, Promise<TenantPolicy>>();
  private readonly now: () => number;

  constructor(
    private readonly store: TenantStore | null,
    private readonly defaults: TenantDefaults,
    private readonly options: TenantDirectoryOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Whether tenants have their own settings (multi-tenant mode). */
  get perTenant(): boolean {
    return this.store !== null;
  }

  /**
   * The tenant's policy. When `tenants` cannot be read, the last one read is used; with none,
   * the error goes on.
   */
  async policy(tenantId: string): Promise<TenantPolicy> {
    if (!this.store) return this.fromRecord(tenantId, null);
    const cached = this.cache.get(tenantId);
    if (cached && this.now() - cached.readAt < this.options.cacheMs) return cached.policy;
    let pending = this.reading.get(tenantId);
    if (!pending) {
      pending = this.store
        .get(tenantId)
        .then((record) => {
          const policy = this.fromRecord(tenantId, record);
          this.cache.set(tenantId, { policy, readAt: this.now() });
          return policy;
        })
        .catch((err: unknown) => {
          if (cached) return cached.policy;
          throw err;
        })
        .finally(() => this.reading.delete(tenantId));
      this.reading.set(tenantId, pending);
    }
    return pending;
  }

  /** The policy last read for the tenant (the defaults when none was), without waiting: for synchronous paths inside a run. */
  peek(tenantId: string): TenantPolicy {
    return this.cache.get(tenantId)?.policy ?? this.fromRecord(tenantId, null);
  }

  /** Drops what this process knows of a tenant (after it changed it itself). */
  forget(tenantId: string): void {
    this.cache.delete(tenantId);
  }

  private fromRecord(tenantId: string, record: TenantRecord | null): TenantPolicy {
    const limits = { ...this.defaults };
    if (record) for (const key of Object.keys(limits) as Array<keyof EffectiveLimits>) limits[key] = record[key] ?? this.defaults[key];
    return { tenantId, limits, features: record ? new FeatureSwitch(record.features) : FeatureSwitch.ALL_ON, timeZone: record?.timeZone ?? 'UTC' };
  }
}
