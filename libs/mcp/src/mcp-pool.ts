import { createHash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { McpAuthorizationRequired, McpConnection, McpUnavailableError, type ListLimits, type McpCallOptions, type McpStatus, type UrlCheck, type McpConnectionOptions } from './mcp-connection.js';

/** Whose connection: one shared by everyone on this worker (a global server), or one user's. */
export type PoolScope = { kind: 'global' } | { kind: 'user'; tenantId: string; userId: string };

export interface McpPoolOptions {
  /** Connections one user may hold on this worker (DATAAGENT_MCP_MAX_SERVERS_PER_USER). */
  maxPerUser: number;
  /** Connections this worker holds in all (DATAAGENT_MCP_MAX_CONNECTIONS). */
  maxConnections: number;
  connectTimeoutMs: number;
  /** A connection nobody used for this long is closed (DATAAGENT_MCP_IDLE_SECONDS). */
  idleMs: number;
  /** Health: a ping this often; this many failures in a row mark the server unavailable. */
  pingIntervalMs: number;
  pingTimeoutMs: number;
  pingFailuresAllowed: number;
  /** Reconnects: exponential backoff from `backoffBaseMs` to `backoffMaxMs`, with jitter. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Failed connection attempts per minute to one server, however many users and runs want it, before it rests. */
  attemptsPerMinute: number;
  listLimits?: ListLimits;
  /** The outbound address policy for remote servers, whose connections it pins (see McpConnectionOptions.checkUrl). */
  checkUrl?: (url: string) => Promise<UrlCheck>;
  /** Most bytes of one message from a server (DATAAGENT_MCP_MAX_MESSAGE_BYTES); default 4 MiB. */
  maxMessageBytes?: number;
  /** Told whenever a connection's status or catalog changes. */
  onStatus?: (scope: PoolScope, connection: McpConnection) => void;
  /** Starts a user's stdio server in that user's sandbox; absent: stdio servers are spawned as they are. */
  launchStdio?: (scope: Extract<PoolScope, { kind: 'user' }>, config: McpServerConfig) => McpConnectionOptions['launchStdio'];
  /** Signs the requests to a remote server with the scope's sign-in (undefined for a server that needs none of it). */
  authorizeFetch?: (scope: PoolScope, config: McpServerConfig) => McpConnectionOptions['authorizeFetch'];
  /** Offer servers elicitation: the runs' calls answer it by asking their person (see McpConnection.callTool). */
  elicitation?: boolean;
  now?: () => number;
  /** Makes each connection; default a real {@link McpConnection} (specs pass a fake). */
  connect?: (config: McpServerConfig, options: McpConnectionOptions) => McpConnection;
}

/** Options of one {@link McpPool.acquire}. */
export interface AcquireOptions {
  /**
   * {@link McpPool.mark} taken before the caller read `config`: a release of this scope's server
   * since then may have been about a config newer than the one read, so the connection is made
   * for this lease alone and closed when it is released, never kept in the pool.
   */
  configReadAt?: number;
}

export const MCP_POOL_DEFAULTS: Omit<McpPoolOptions, 'maxPerUser' | 'maxConnections' | 'connectTimeoutMs' | 'idleMs'> = {
  pingIntervalMs: 30_000,
  pingTimeoutMs: 5_000,
  pingFailuresAllowed: 3,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  attemptsPerMinute: 6,
};

/** A run's hold on a connection: the pool does not close it for idleness while held. */
export interface McpLease {
  readonly connection: McpConnection;
  /** Calls a tool, reconnecting first (within the backoff and breaker) when the connection dropped. */
  callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<CallToolResult>;
  release(): void;
}

interface Entry {
  key: string;
  scope: PoolScope;
  scopeKey: string;
  connection: McpConnection;
  breakerKey: string;
  leases: number;
  lastUsed: number;
  connecting?: Promise<void>;
  pingFailures: number;
  /** Out of the pool already: closed when its last lease is released. */
  retired?: boolean;
}

interface Breaker {
  /** Failures in a row, for the backoff. */
  failures: number;
  nextAttemptAt: number;
  /** When recent attempts failed; a success clears them. */
  failedAt: number[];
}

/**
 * A worker's MCP connections, per user and server (and shared ones for global servers).
 * Connections open lazily on a run's first need, one handshake however many runs wait for it;
 * stay within a per-user and a per-process cap (the least recently used idle one closes first);
 * close when idle, on a timer; are pinged for health; and reconnect with backoff behind a
 * breaker per server, so one failing server is tried a bounded number of times a minute.
 */
export class McpPool {
  private readonly entries = new Map<string, Entry>();
  private readonly breakers = new Map<string, Breaker>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly options: McpPoolOptions;
  private closed = false;
  private checkingHealth = false;
  /** Counts releases ({@link closeScope}, {@link retain}); `released` holds the count at each scope's and server's last one. */
  private releases = 0;
  private readonly released = new Map<string, number>();
  /**
   * Connections out of the pool that runs still hold (retired by a release, or made with a stale
   * config): they count under the caps until closed, or releasing a config while runs hold it
   * would let a user hold more connections than the cap.
   */
  private readonly retiredInUse = new Set<Entry>();

  constructor(options: McpPoolOptions) {
    this.options = options;
    const sweep = setInterval(() => void this.closeIdle(), Math.max(50, Math.min(this.options.idleMs / 2, 5_000)));
    const health = setInterval(() => void this.checkHealth(), this.options.pingIntervalMs);
    sweep.unref();
    health.unref();
    this.timers.push(sweep, health);
  }

  private get now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Connections held now, in all and per scope (`global`, `user:<tenant>:<user>`). */
  stats(): { total: number; byScope: Record<string, number>; leased: number } {
    const byScope: Record<string, number> = {};
    let leased = 0;
    for (const entry of this.entries.values()) {
      byScope[entry.scopeKey] = (byScope[entry.scopeKey] ?? 0) + 1;
      if (entry.leases > 0) leased++;
    }
    return { total: this.entries.size, byScope, leased };
  }

  /** Each pooled connection's server name and status (one item per connection), for the metrics. */
  statuses(): Array<{ server: string; status: McpStatus }> {
    return [...this.entries.values()].map((entry) => ({ server: entry.connection.config.name, status: entry.connection.status }));
  }

  /**
   * A connected lease on the server for this scope.
   * @throws McpUnavailableError when it cannot be reached, is backing off, or a cap leaves no room.
   */
  async acquire(scope: PoolScope, config: McpServerConfig, options: AcquireOptions = {}): Promise<McpLease> {
    if (this.closed) throw new McpUnavailableError(config.name, 'the worker is stopping', true);
    const scopeKey = scopeKeyOf(scope);
    // A changed config is another connection; the old one idles out once its runs end.
    const key = `${scopeKey}/${config.name}/${hashConfig(config)}`;
    let entry = this.entries.get(key);
    let evicted: Entry[] = [];
    // The caller read its config before a release that may have been about a newer one (it read
    // the servers, the gateway changed one and told the workers, then this acquire came): pooled,
    // the connection would outlive the release that was meant to close it, nothing retiring it.
    const stale = options.configReadAt !== undefined && this.releasedSince(scopeKey, config.name, options.configReadAt);
    if (!entry) {
      // Chosen and reserved without awaiting: concurrent acquires see this entry (one handshake)
      // and its place under the caps.
      evicted = this.makeRoom(scope, scopeKey, config.name);
      entry = { key, scope, scopeKey, breakerKey: endpointKey(config), leases: 0, lastUsed: this.now, pingFailures: 0, connection: undefined as unknown as McpConnection };
      const created = entry;
      entry.connection = (this.options.connect ?? ((c, o) => new McpConnection(c, o)))(config, {
        connectTimeoutMs: this.options.connectTimeoutMs,
        listLimits: this.options.listLimits,
        checkUrl: this.options.checkUrl,
        maxMessageBytes: this.options.maxMessageBytes,
        onChange: (connection) => this.options.onStatus?.(created.scope, connection),
        ...(this.options.elicitation ? { elicitation: true } : {}),
        ...(scope.kind === 'user' && this.options.launchStdio ? { launchStdio: this.options.launchStdio(scope, config) } : {}),
        ...(this.options.authorizeFetch ? { authorizeFetch: this.options.authorizeFetch(scope, config) } : {}),
      });
      // A stale one is this lease's alone (outside the caps' count for the moment it lives).
      if (stale) {
        entry.retired = true;
        this.retiredInUse.add(entry);
      } else this.entries.set(key, entry);
    }
    entry.leases++;
    entry.lastUsed = this.now;
    try {
      // The evicted close first, so the processes and sockets held stay within the caps.
      await Promise.all(evicted.map((e) => e.connection.close().catch(() => undefined)));
      await this.ensureConnected(entry);
    } catch (err) {
      entry.leases--;
      if (entry.leases === 0 && !entry.connection.connected) this.forget(entry);
      if (entry.leases === 0 && entry.retired) await this.closeRetired(entry);
      throw err;
    }
    return this.lease(entry);
  }

  /** Closes every connection (SIGTERM drain) and stops the timers. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    const all = [...this.entries.values(), ...this.retiredInUse];
    this.entries.clear();
    this.retiredInUse.clear();
    await Promise.all(all.map((e) => e.connection.close().catch(() => undefined)));
  }

  /**
   * Closes a user's connections (all of them, or one server's) now, and those runs still hold
   * when they let go: their sessions ended, or that server's config changed.
   * @returns how many connections were closed or retired.
   */
  async closeScope(scope: PoolScope, serverName?: string): Promise<number> {
    const scopeKey = scopeKeyOf(scope);
    this.noteRelease(serverName === undefined ? scopeKey : `${scopeKey}/${serverName}`);
    const matching = [...this.entries.values()].filter((e) => e.scopeKey === scopeKey && (serverName === undefined || e.connection.config.name === serverName));
    for (const entry of matching) this.retire(entry);
    await Promise.all(matching.filter((e) => e.leases === 0).map((e) => e.connection.close().catch(() => undefined)));
    return matching.length;
  }

  /** Where releases stand now: taken before reading the configs to acquire with (see {@link AcquireOptions.configReadAt}). */
  mark(): number {
    return this.releases;
  }

  /** The users this pool holds connections for. */
  userScopes(): Array<Extract<PoolScope, { kind: 'user' }>> {
    const scopes = new Map<string, Extract<PoolScope, { kind: 'user' }>>();
    for (const entry of this.entries.values()) {
      if (entry.scope.kind === 'user') scopes.set(entry.scopeKey, entry.scope);
    }
    return [...scopes.values()];
  }

  /**
   * Keeps only the user's connections made with one of `configs` (their servers as they stand
   * now): the others close now, or when the runs holding them let go, as {@link closeScope}.
   * @returns how many connections were closed or retired.
   */
  async retain(scope: PoolScope, configs: readonly McpServerConfig[]): Promise<number> {
    const scopeKey = scopeKeyOf(scope);
    const current = new Set(configs.map((config) => `${scopeKey}/${config.name}/${hashConfig(config)}`));
    const stale = [...this.entries.values()].filter((e) => e.scopeKey === scopeKey && !current.has(e.key));
    for (const name of new Set(stale.map((e) => e.connection.config.name))) this.noteRelease(`${scopeKey}/${name}`);
    for (const entry of stale) this.retire(entry);
    await Promise.all(stale.filter((e) => e.leases === 0).map((e) => e.connection.close().catch(() => undefined)));
    return stale.length;
  }

  /** Closes connections nobody holds that were last used more than `idleMs` ago. */
  async closeIdle(): Promise<number> {
    const cutoff = this.now - this.options.idleMs;
    const idle = [...this.entries.values()].filter((e) => e.leases === 0 && !e.connecting && e.lastUsed <= cutoff);
    for (const entry of idle) this.entries.delete(entry.key);
    await Promise.all(idle.map((e) => e.connection.close().catch(() => undefined)));
    return idle.length;
  }

  private lease(entry: Entry): McpLease {
    let released = false;
    return {
      connection: entry.connection,
      callTool: async (name, args, options) => {
        entry.lastUsed = this.now;
        await this.ensureConnected(entry);
        try {
          return await entry.connection.callTool(name, args, options);
        } finally {
          entry.lastUsed = this.now;
        }
      },
      release: () => {
        if (released) return;
        released = true;
        entry.leases--;
        entry.lastUsed = this.now;
        if (entry.retired && entry.leases === 0) void this.closeRetired(entry);
      },
    };
  }

  /** Connects (once, however many wait) unless connected, within the server's backoff and breaker. */
  private async ensureConnected(entry: Entry): Promise<void> {
    if (entry.connection.connected) return;
    if (!entry.connecting) {
      const breaker = this.breakers.get(entry.breakerKey) ?? { failures: 0, nextAttemptAt: 0, failedAt: [] };
      this.breakers.set(entry.breakerKey, breaker);
      const now = this.now;
      breaker.failedAt = breaker.failedAt.filter((t) => t > now - 60_000);
      const name = entry.connection.config.name;
      if (now < breaker.nextAttemptAt) {
        throw new McpUnavailableError(name, `${entry.connection.lastError ?? 'it failed'}; next attempt in ${Math.ceil((breaker.nextAttemptAt - now) / 1000)} s`, true);
      }
      if (breaker.failedAt.length >= this.options.attemptsPerMinute) {
        const retryIn = Math.ceil((breaker.failedAt[0]! + 60_000 - now) / 1000);
        throw new McpUnavailableError(name, `${entry.connection.lastError ?? 'it failed'}; ${breaker.failedAt.length} failed attempts in the last minute, next in ${retryIn} s`, true);
      }
      entry.connecting = entry.connection
        .connect()
        .then(() => {
          breaker.failures = 0;
          breaker.nextAttemptAt = 0;
          breaker.failedAt = [];
          entry.pingFailures = 0;
        })
        .catch((err: unknown) => {
          // The server answered: it wants this person to sign in, which waiting does not change
          // and which says nothing of the server's health for anyone else.
          if (err instanceof McpAuthorizationRequired) throw err;
          breaker.failures++;
          breaker.failedAt.push(this.now);
          const backoff = Math.min(this.options.backoffMaxMs, this.options.backoffBaseMs * 2 ** (breaker.failures - 1));
          breaker.nextAttemptAt = this.now + backoff * (0.5 + Math.random());
          throw err;
        })
        .finally(() => {
          entry.connecting = undefined;
        });
    }
    await entry.connecting;
  }

  /**
   * Keeps within the per-user and per-process caps: takes the least recently used idle
   * connections out of the pool (the caller closes them).
   * @throws McpUnavailableError when every connection in the way is in use.
   */
  private makeRoom(scope: PoolScope, scopeKey: string, name: string): Entry[] {
    const evicted: Entry[] = [];
    if (scope.kind === 'user') {
      const mine = [...this.entries.values()].filter((e) => e.scopeKey === scopeKey);
      const held = [...this.retiredInUse].filter((e) => e.scopeKey === scopeKey).length;
      if (mine.length + held >= this.options.maxPerUser) {
        const idle = this.takeIdle(mine);
        if (!idle) throw new McpUnavailableError(name, `this user already holds ${this.options.maxPerUser} MCP connections in use on this worker`, true);
        evicted.push(idle);
      }
    }
    if (this.entries.size + this.retiredInUse.size >= this.options.maxConnections) {
      const idle = this.takeIdle([...this.entries.values()]);
      if (!idle) {
        // Nothing is closed when the connection cannot be made anyway.
        for (const e of evicted) this.entries.set(e.key, e);
        throw new McpUnavailableError(name, `this worker holds its maximum of ${this.options.maxConnections} MCP connections, all in use`, true);
      }
      evicted.push(idle);
    }
    return evicted;
  }

  /** Takes the entry out of the pool: closed by its release's caller when idle, else when its last lease is released. */
  private retire(entry: Entry): void {
    this.entries.delete(entry.key);
    entry.retired = true;
    if (entry.leases > 0) this.retiredInUse.add(entry);
  }

  private async closeRetired(entry: Entry): Promise<void> {
    this.retiredInUse.delete(entry);
    await entry.connection.close().catch(() => undefined);
  }

  private noteRelease(key: string): void {
    this.released.delete(key);
    this.released.set(key, ++this.releases);
    // The oldest go first: they are older than any acquire still under way.
    if (this.released.size > 10_000) this.released.delete(this.released.keys().next().value!);
  }

  /** Whether the scope, or its server of this name, was released after `mark`. */
  private releasedSince(scopeKey: string, name: string, mark: number): boolean {
    return (this.released.get(scopeKey) ?? 0) > mark || (this.released.get(`${scopeKey}/${name}`) ?? 0) > mark;
  }

  /** Takes the entry out of the pool unless another has its key already. */
  private forget(entry: Entry): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
  }

  private takeIdle(candidates: Entry[]): Entry | undefined {
    const idle = candidates.filter((e) => e.leases === 0 && !e.connecting).sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (idle) this.entries.delete(idle.key);
    return idle;
  }

  /** Pings connected servers; enough failures in a row close the connection and hide its tools. */
  private async checkHealth(): Promise<void> {
    // A slow sweep (pings timing out, a server being closed) is not overlapped by the next one.
    if (this.checkingHealth) return;
    this.checkingHealth = true;
    try {
      await this.pingAll();
    } finally {
      this.checkingHealth = false;
    }
  }

  private async pingAll(): Promise<void> {
    await Promise.all(
      [...this.entries.values()].map(async (entry) => {
        if (!entry.connection.connected || entry.connecting) return;
        if (await entry.connection.ping(this.options.pingTimeoutMs)) {
          entry.pingFailures = 0;
          // Keeps the published status (and its last check) fresh while nothing changes.
          this.options.onStatus?.(entry.scope, entry.connection);
          return;
        }
        if (++entry.pingFailures < this.options.pingFailuresAllowed) return;
        if (entry.leases === 0) this.forget(entry);
        await entry.connection.markUnavailable(`no answer to ${entry.pingFailures} pings`);
      }),
    );
  }
}

function scopeKeyOf(scope: PoolScope): string {
  return scope.kind === 'global' ? 'global' : `user:${scope.tenantId}:${scope.userId}`;
}

function hashConfig(config: McpServerConfig): string {
  return createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 12);
}

/** The server itself (not whose connection): the breaker counts attempts to it across users. */
function endpointKey(config: McpServerConfig): string {
  return config.transport === 'stdio' ? `stdio:${config.command} ${(config.args ?? []).join(' ')}` : `${config.transport}:${config.url}`;
}
