import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import type { McpConnection, McpConnectionOptions, McpStatus } from './mcp-connection.js';
import { McpPool, MCP_POOL_DEFAULTS, type PoolScope } from './mcp-pool.js';

/** A connection that connects when told to and records whether it was closed. */
class FakeConnection {
  status: McpStatus = 'disconnected';
  catalog = { tools: [], version: '', partial: false };
  closed = false;
  private handshake?: () => void;

  constructor(
    readonly config: McpServerConfig,
    private readonly manual: boolean,
  ) {}

  get connected(): boolean {
    return this.status === 'connected';
  }

  async connect(): Promise<void> {
    this.status = 'connecting';
    if (this.manual) await new Promise<void>((resolve) => (this.handshake = resolve));
    this.status = 'connected';
  }

  /** Ends a handshake begun with `manual`. */
  finishHandshake(): void {
    this.handshake!();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.status = 'disconnected';
  }
}

const BOB: PoolScope = { kind: 'user', tenantId: 'acme', userId: 'bob' };
const ALICE: PoolScope = { kind: 'user', tenantId: 'acme', userId: 'alice' };
const server = (mode: string): McpServerConfig => ({ name: 'mine', transport: 'stdio', command: 'node', args: ['server.mjs', mode] });

function poolWithFakes(options: { manual?: boolean } = {}) {
  const made: FakeConnection[] = [];
  const pool = new McpPool({
    ...MCP_POOL_DEFAULTS,
    maxPerUser: 5,
    maxConnections: 50,
    connectTimeoutMs: 1_000,
    idleMs: 60_000,
    connect: (config: McpServerConfig, _options: McpConnectionOptions) => {
      const connection = new FakeConnection(config, options.manual ?? false);
      made.push(connection);
      return connection as unknown as McpConnection;
    },
  });
  return { pool, made };
}

describe('McpPool releases', () => {
  let pools: McpPool[] = [];
  const track = <T extends { pool: McpPool }>(made: T) => (pools.push(made.pool), made);
  afterEach(async () => {
    await Promise.all(pools.map((p) => p.close()));
    pools = [];
  });

  it("closes a connection made with a config read before the server's release, when its run lets go", async () => {
    const { pool, made } = track(poolWithFakes());
    // A run reads bob's servers (the old config), then the gateway changes the server and the
    // release comes, then the run acquires with what it read.
    const readAt = pool.mark();
    expect(await pool.closeScope(BOB, 'mine')).toBe(0);
    const lease = await pool.acquire(BOB, server('old'), { configReadAt: readAt });
    expect(lease.connection.connected).toBe(true);
    // Not pooled: the next run, which reads the new config, does not get the old one.
    expect(pool.stats().total).toBe(0);
    lease.release();
    expect(made).toHaveLength(1);
    expect(made[0]!.closed).toBe(true);
  });

  it('keeps connections acquired after the release, or for other servers and users, pooled', async () => {
    const { pool, made } = track(poolWithFakes());
    const readAt = pool.mark();
    await pool.closeScope(BOB, 'other');
    const aliceLease = await pool.acquire(ALICE, server('old'), { configReadAt: readAt });
    const bobLease = await pool.acquire(BOB, server('old'), { configReadAt: readAt });
    const fresh = await pool.acquire(BOB, { ...server('new'), name: 'other' }, { configReadAt: pool.mark() });
    for (const lease of [aliceLease, bobLease, fresh]) lease.release();
    expect(pool.stats().total).toBe(3);
    expect(made.map((c) => c.closed)).toEqual([false, false, false]);
  });

  it('closes a connection still shaking hands when its release comes, once its run lets go', async () => {
    const { pool, made } = track(poolWithFakes({ manual: true }));
    const acquiring = pool.acquire(BOB, server('old'), { configReadAt: pool.mark() });
    await Promise.resolve();
    expect(made[0]!.status).toBe('connecting');
    expect(await pool.closeScope(BOB, 'mine')).toBe(1);
    made[0]!.finishHandshake();
    const lease = await acquiring;
    expect(made[0]!.closed).toBe(false);
    lease.release();
    expect(made[0]!.closed).toBe(true);
    expect(pool.stats().total).toBe(0);
  });

  it('closes a connection made with a config read before all the user’s connections were released', async () => {
    const { pool, made } = track(poolWithFakes());
    const readAt = pool.mark();
    await pool.closeScope(BOB);
    const lease = await pool.acquire(BOB, server('old'), { configReadAt: readAt });
    lease.release();
    expect(made[0]!.closed).toBe(true);
  });

  it("counts connections runs still hold after their release under the user's cap, so releasing configs cannot multiply them", async () => {
    const { pool, made } = track(poolWithFakes());
    const named = (i: number): McpServerConfig => ({ ...server(`v${i}`), name: `s${i}` });
    // Five runs hold bob's five servers, his cap; he changes them all, and the releases retire them.
    const held = await Promise.all([0, 1, 2, 3, 4].map((i) => pool.acquire(BOB, named(i))));
    await pool.closeScope(BOB);
    // Run after run acquiring the new configs would each add a process while the old ones live.
    await expect(pool.acquire(BOB, named(5))).rejects.toThrow('already holds 5 MCP connections');
    // A stale acquire counts too, and alice is not held back by bob.
    await expect(pool.acquire(BOB, named(6), { configReadAt: -1 })).rejects.toThrow('already holds 5 MCP connections');
    const alice = await pool.acquire(ALICE, named(0));
    alice.release();
    // One run lets go: its old connection closes, and bob may open one more, up to five again.
    held[0]!.release();
    expect(made[0]!.closed).toBe(true);
    (await pool.acquire(BOB, named(5))).release();
    expect(made.filter((c) => !c.closed && (c as unknown) !== alice.connection)).toHaveLength(5);
  });
});
