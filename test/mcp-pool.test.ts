import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { MCP_POOL_DEFAULTS, McpPool, type McpLease, type PoolScope } from '#mcp/mcp-pool.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpConnection } from '#mcp/mcp-connection.js';
import { FAULT_SERVER, killRecordedServers, startFaultHttp } from './support/mcp-fault-servers.js';
import { EVERYTHING, freePort, openConnectionsTo, startEverything, type RunningServer } from './support/mcp-servers.js';

/** A worker's MCP pool against real server-everything processes: sharing, caps, idle close, no leaks. */
describe('the MCP connection pool', () => {
  const stdio: McpServerConfig = { name: 'ev', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] };
  const user = (n: number): PoolScope => ({ kind: 'user', tenantId: 't', userId: `u${n}` });
  const signal = new AbortController().signal;
  const pools: McpPool[] = [];
  const pool = (options: Partial<ConstructorParameters<typeof McpPool>[0]> = {}) => {
    const created = new McpPool({ ...MCP_POOL_DEFAULTS, maxPerUser: 5, maxConnections: 100, connectTimeoutMs: 20_000, idleMs: 60_000, ...options });
    pools.push(created);
    return created;
  };
  const alive = (pid: number | undefined) => {
    if (!pid) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const until = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
  });

  it("shares one handshake among a user's concurrent runs, and one connection among all users for a global server", async () => {
    const p = pool();
    const leases = await Promise.all(Array.from({ length: 10 }, () => p.acquire(user(1), stdio)));
    expect(new Set(leases.map((l) => l.connection)).size).toBe(1);
    const shared = await Promise.all([1, 2, 3].map(() => p.acquire({ kind: 'global' }, stdio)));
    expect(new Set(shared.map((l) => l.connection)).size).toBe(1);
    expect(p.stats()).toMatchObject({ total: 2, byScope: { 'user:t:u1': 1, global: 1 } });
    expect(await leases[0]!.callTool('echo', { message: 'x' }, { signal, timeoutMs: 5_000 })).toMatchObject({ content: [{ text: 'Echo: x' }] });
    await p.close();
  });

  it("keeps only the connections of a user's servers as they stand: a changed one closes now, or when its run lets go", async () => {
    const p = pool();
    const kept: McpServerConfig = { ...stdio, name: 'kept' };
    const changed: McpServerConfig = { ...stdio, name: 'changed' };
    const idle = await p.acquire(user(1), kept);
    idle.release();
    const held = await p.acquire(user(1), changed);
    const other = await p.acquire(user(2), changed);
    other.release();
    const [keptPid, changedPid, otherPid] = [idle.connection.pid, held.connection.pid, other.connection.pid];
    expect(p.userScopes()).toEqual(expect.arrayContaining([user(1), user(2)]));
    // `changed` now has another argument: its held connection is retired, the unchanged one stays.
    expect(await p.retain(user(1), [kept, { ...changed, args: [...(changed.args ?? []), '--changed'] }])).toBe(1);
    expect(alive(keptPid)).toBe(true);
    expect(alive(changedPid)).toBe(true);
    held.release();
    await until(() => !alive(changedPid), 'the retired connection closes when its run lets go');
    // A user with no servers left keeps none; another user is untouched.
    expect(await p.retain(user(1), [])).toBe(1);
    await until(() => !alive(keptPid), 'the unchanged connection closes once the server is gone');
    expect(alive(otherPid)).toBe(true);
    expect(p.userScopes()).toEqual([user(2)]);
    await p.close();
  });

  it("keeps a user within their cap, closing their least recently used idle connection first, and refuses when all are in use", async () => {
    const p = pool({ maxPerUser: 2 });
    const servers = [1, 2, 3].map((i): McpServerConfig => ({ ...stdio, name: `ev${i}` }));
    const a = await p.acquire(user(1), servers[0]!);
    const b = await p.acquire(user(1), servers[1]!);
    await expect(p.acquire(user(1), servers[2]!)).rejects.toThrow('already holds 2 MCP connections');
    // Another user is not affected by this one's cap.
    (await p.acquire(user(2), servers[2]!)).release();
    const oldest = a.connection.pid;
    a.release();
    b.release();
    const c = await p.acquire(user(1), servers[2]!);
    expect(p.stats().byScope['user:t:u1']).toBe(2);
    await until(() => !alive(oldest), 'the evicted server process exits');
    expect(alive(b.connection.pid)).toBe(true);
    c.release();
    await p.close();
  });

  it('closes connections idle past the idle time, on a timer, and leaves no process behind', async () => {
    const p = pool({ idleMs: 300 });
    const lease = await p.acquire(user(1), stdio);
    const pid = lease.connection.pid;
    expect(alive(pid)).toBe(true);
    lease.release();
    await until(() => p.stats().total === 0 && !alive(pid), 'the idle connection closes and its process exits');
  });

  it('keeps 20 users with one stdio server each within the process cap, and leaves no process after closing', async () => {
    const p = pool({ maxConnections: 5 });
    const pids = new Set<number>();
    let most = 0;
    for (let i = 0; i < 20; i++) {
      const lease: McpLease = await p.acquire(user(100 + i), stdio);
      pids.add(lease.connection.pid!);
      expect(await lease.callTool('get-sum', { a: i, b: 1 }, { signal, timeoutMs: 5_000 })).toMatchObject({ content: [{ text: `The sum of ${i} and 1 is ${i + 1}.` }] });
      lease.release();
      most = Math.max(most, p.stats().total, [...pids].filter(alive).length);
    }
    expect(pids.size).toBe(20);
    expect(most).toBeLessThanOrEqual(5);
    await p.close();
    await until(() => [...pids].every((pid) => !alive(pid)), 'every server process exits');
  });

  describe('health', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'da-mcp-pool-'));
    });
    afterAll(() => {
      killRecordedServers(dir);
      rmSync(dir, { recursive: true, force: true });
    });

    it('marks a server that stops answering pings unavailable after three misses, closes it and leaves no process', async () => {
      const seen: Array<{ status: string; error?: string }> = [];
      const p = pool({
        pingIntervalMs: 100,
        pingTimeoutMs: 250,
        onStatus: (_scope, c: McpConnection) => seen.push({ status: c.status, error: c.lastError }),
      });
      const frozen: McpServerConfig = { name: 'frozen', transport: 'stdio', command: process.execPath, args: [FAULT_SERVER, 'slow', '--record', join(dir, 'frozen.jsonl')] };
      const lease = await p.acquire(user(1), frozen);
      const pid = lease.connection.pid!;
      lease.release();
      await until(() => seen.filter((s) => s.status === 'connected').length >= 2, 'a ping that succeeds refreshes the status');
      process.kill(pid, 'SIGSTOP');
      await until(() => seen.some((s) => s.status === 'error'), 'three missed pings mark it unavailable');
      expect(seen.find((s) => s.status === 'error')!.error).toBe('no answer to 3 pings');
      expect(p.stats().total).toBe(0);
      await until(() => !alive(pid), 'the frozen server is killed');
      await p.close();
    });

    it('starts a new session when a streamable HTTP server no longer knows the old one (404), within the same call, and ends it with DELETE on close', async () => {
      const port = await freePort();
      let server = await startFaultHttp('http', port, join(dir, 'first.jsonl'));
      const p = pool();
      try {
        const lease = await p.acquire(user(1), { name: 'restarting', transport: 'streamable-http', url: server.url });
        expect(await lease.callTool('echo', { message: 'one' }, { signal, timeoutMs: 5_000 })).toMatchObject({ content: [{ text: 'Echo: one' }] });
        await server.stop();
        server = await startFaultHttp('http', port, join(dir, 'second.jsonl'));
        expect(await lease.callTool('echo', { message: 'two' }, { signal, timeoutMs: 5_000 })).toMatchObject({ content: [{ text: 'Echo: two' }] });
        // The restarted server refused the old session once, then shook hands anew.
        expect(server.record.count((e) => e.rpc === 'initialize')).toBe(1);
        lease.release();
        // Closing the user's connections ends the session on the server.
        expect(await p.closeScope(user(1))).toBe(1);
        const live = server.record.entries().filter((e) => e.rpc === 'tools/call').at(-1)!.session;
        expect(live).toEqual(expect.any(String));
        expect(server.record.count((e) => e.event === 'http' && e.method === 'DELETE' && e.session === live)).toBe(1);
        expect(p.stats().total).toBe(0);
      } finally {
        await p.close();
        await server.stop();
      }
    });
  });

  describe('over streamable HTTP', () => {
    let http: RunningServer;
    beforeAll(async () => {
      http = await startEverything('streamableHttp');
    });
    afterAll(async () => {
      await http?.stop();
    });

    it('serves 200 users with one server each on one worker within the caps', async () => {
      const p = pool({ maxConnections: 50 });
      const config: McpServerConfig = { name: 'ev', transport: 'streamable-http', url: http.url };
      let most = 0;
      for (let round = 0; round < 4; round++) {
        // 50 users at a time hold their lease together, then let go.
        const leases = await Promise.all(Array.from({ length: 50 }, (_, i) => p.acquire(user(1000 + round * 50 + i), config)));
        most = Math.max(most, p.stats().total);
        const answers = await Promise.all(leases.map((l, i) => l.callTool('echo', { message: `u${round * 50 + i}` }, { signal, timeoutMs: 10_000 })));
        expect(answers.map((a) => (a.content as Array<{ text: string }>)[0]!.text)).toEqual(leases.map((_, i) => `Echo: u${round * 50 + i}`));
        for (const l of leases) l.release();
      }
      expect(most).toBe(50);
      expect(p.stats().total).toBeLessThanOrEqual(50);
      await p.close();
      expect(p.stats().total).toBe(0);
      // Every session was ended and no socket to the server stays open (idle keep-alive ones time out).
      await until(() => openConnectionsTo(http.port) === 0, 'no socket to the server is left open');
    });
  });
});
