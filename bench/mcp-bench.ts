import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpRuntimeConfig } from '#core/config/mcp-settings.js';
import { McpConfig } from '#core/mcp/user-server-config.js';
import type { McpServerConfig } from '#core/mcp/mcp-config.js';
import { McpUnavailableError } from '#mcp/mcp-connection.js';
import { McpPool, type McpLease, type McpPoolOptions, type PoolScope } from '#mcp/mcp-pool.js';
import { poolOptionsFor } from '#mcp/mcp-pool-options.js';
import { EVERYTHING, startEverything } from '#test/support/mcp-servers.js';
import { summarize, type LatencySummary } from './percentiles.js';
import { CpuMeter, type CpuUse } from './process-cpu.js';
import type { Teardown } from './teardown.js';

export interface McpBenchOptions {
  /** Recorded sequential echo calls per side (BENCH_MCP_CALLS), after `warmup` unrecorded pairs. */
  calls: number;
  warmup: number;
  /** New user scopes whose first call is timed cold and warm (BENCH_MCP_USERS). */
  users: number;
  /** Concurrent callers of the throughput figure, and how long each side runs. */
  concurrency: number;
  seconds: number;
  log: (line: string) => void;
}

export interface McpThroughput {
  callsPerSecond: number;
  calls: number;
  errors: number;
  latency: LatencySummary;
  /** % of one core: the bench process (pool or bare client) and the server process. */
  cpu: Record<string, CpuUse>;
  /** Node's MaxListenersExceededWarning for an AbortSignal while this side ran, counted instead of printed (see {@link countingListenerWarnings}). */
  abortListenerWarnings: number;
}

export interface McpTransportFigures {
  transport: 'streamable-http' | 'stdio';
  /** One echo call through McpPool's lease, and through the bare SDK Client on its own transport. */
  call: { pool: LatencySummary; bare: LatencySummary };
  /** A new user's acquire (connect, handshake, tools/list) + first echo; warm: the same user's next acquire + echo. */
  firstCall: { cold: LatencySummary; warm: LatencySummary; refusedWithDefaultBreaker: number };
  throughput: { pool: McpThroughput; bare: McpThroughput };
}

export interface McpFigures {
  server: string;
  calls: number;
  warmup: number;
  users: number;
  concurrency: number;
  seconds: number;
  targetOverheadMs: number;
  /** The pool's options as the worker builds them (minus onStatus, which publishes to Redis). */
  pool: Omit<McpPoolOptions, 'checkUrl' | 'onStatus' | 'now' | 'listLimits'>;
  transports: McpTransportFigures[];
}

const ECHO = { message: 'bench' };
/** The worker's MCP settings at their defaults (no DATAAGENT_MCP_* variable is read). */
const WORKER_MCP = new McpRuntimeConfig();
const USER_MCP = new McpConfig();

/** McpPool's options as apps/worker's createMcpRuntime builds them from the config defaults. */
function workerPoolOptions(allowlist: string[], overrides: Partial<McpPoolOptions> = {}): McpPoolOptions {
  return { ...poolOptionsFor(WORKER_MCP, USER_MCP.maxServersPerUser, allowlist), ...overrides };
}

/** How mcp-tools.ts calls through a lease: the dispatcher gives each call its own signal. */
function callViaLease(lease: McpLease): Promise<unknown> {
  return lease.callTool('echo', ECHO, { signal: new AbortController().signal, timeoutMs: WORKER_MCP.callTimeoutMs });
}

async function bareClient(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'bench-bare', version: '0.1.0' });
  await client.connect(transport);
  await client.listTools(); // as the pool does: the client then knows the tools' output schemas
  return client;
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

/** Sequential calls, pool and bare alternating which goes first, so drift and each other's after-effects hit both. */
async function compareCalls(viaPool: () => Promise<unknown>, viaBare: () => Promise<unknown>, options: McpBenchOptions) {
  const poolMs: number[] = [];
  const bareMs: number[] = [];
  for (let i = 0; i < options.warmup + options.calls; i++) {
    const sides: Array<[() => Promise<unknown>, number[]]> = [[viaPool, poolMs], [viaBare, bareMs]];
    if (i % 2 === 1) sides.reverse();
    for (const [call, into] of sides) {
      const ms = await timed(call);
      if (i >= options.warmup) into.push(ms);
    }
  }
  return { pool: summarize(poolMs), bare: summarize(bareMs) };
}

const userScope = (userId: string): PoolScope => ({ kind: 'user', tenantId: 'bench', userId });

/**
 * A new user's first call (acquire: connect, handshake, tools/list; then echo) and the same
 * user's next run (acquire on the open connection; echo), one user after another after one
 * unrecorded user. Each user's connection is closed after (untimed), so stdio servers do not pile up.
 * The breaker is lifted: with its default a server takes only a few new connections a minute.
 */
async function measureFirstCalls(config: McpServerConfig, allowlist: string[], users: number) {
  const pool = new McpPool(workerPoolOptions(allowlist, { attemptsPerMinute: users + 1 }));
  const coldMs: number[] = [];
  const warmMs: number[] = [];
  try {
    for (let u = -1; u < users; u++) {
      const scope = userScope(`user-${u}`);
      const run = async () => {
        const started = performance.now();
        const lease = await pool.acquire(scope, config);
        await callViaLease(lease);
        const ms = performance.now() - started;
        lease.release();
        return { ms, lease };
      };
      const cold = await run();
      const warm = await run();
      await warm.lease.connection.close();
      if (u < 0) continue;
      coldMs.push(cold.ms);
      warmMs.push(warm.ms);
    }
  } finally {
    await pool.close();
  }
  return { cold: summarize(coldMs), warm: summarize(warmMs) };
}

/** New users refused by a pool with the worker's exact options (its breaker counts every connection attempt to a server). */
async function countRefusedUsers(config: McpServerConfig, allowlist: string[], users: number): Promise<number> {
  const pool = new McpPool(workerPoolOptions(allowlist));
  let refused = 0;
  try {
    for (let u = 0; u < users; u++) {
      try {
        (await pool.acquire(userScope(`probe-${u}`), config)).release();
      } catch (err) {
        if (!(err instanceof McpUnavailableError)) throw err;
        refused++;
      }
    }
  } finally {
    await pool.close();
  }
  return refused;
}

/**
 * Runs `work` with Node's MaxListenersExceededWarning for an AbortSignal counted instead of
 * printed: the SDK's streamable HTTP transport hands its one session-wide signal to every
 * fetch, and undici lets go of the listener it adds only when that request is garbage
 * collected, so 50 callers pass the 1500 undici allows between collections. Pool and bare
 * client alike; other warnings are printed as usual.
 */
async function countingListenerWarnings<T>(work: () => Promise<T>): Promise<{ result: T; warnings: number }> {
  const printers = process.listeners('warning');
  let warnings = 0;
  const filter = (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning' && /listeners added to \[AbortSignal\]/.test(warning.message)) warnings++;
    else for (const print of printers) print(warning);
  };
  for (const print of printers) process.off('warning', print);
  process.on('warning', filter);
  try {
    const result = await work();
    await nextTurn(); // warnings are emitted on the next tick
    return { result, warnings };
  } finally {
    process.off('warning', filter);
    for (const print of printers) process.on('warning', print);
  }
}

/** `concurrency` callers each calling back to back until `ms` is over. */
async function callsFor(call: () => Promise<unknown>, concurrency: number, ms: number, pids: Record<string, number>) {
  const latency: number[] = [];
  let errors = 0;
  const cpu = new CpuMeter(pids);
  const started = performance.now();
  const end = started + ms;
  cpu.start();
  const { warnings } = await countingListenerWarnings(() =>
    Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const t = performance.now();
          try {
            await call();
            latency.push(performance.now() - t);
          } catch {
            errors++;
          }
        }
      }),
    ),
  );
  return { latency, errors, seconds: (performance.now() - started) / 1000, cpu: cpu.stop(), warnings };
}

/**
 * Pool and bare client in quarters ordered ABBA BAAB after a second of each unrecorded: the
 * first concurrent burst of a process runs cold, and a noisy moment should not land on one side only.
 */
async function measureThroughput(sides: Record<'pool' | 'bare', { call: () => Promise<unknown>; serverPid: number }>, options: McpBenchOptions) {
  const quarters = { pool: [] as Awaited<ReturnType<typeof callsFor>>[], bare: [] as Awaited<ReturnType<typeof callsFor>>[] };
  const run = (side: 'pool' | 'bare', ms: number) => callsFor(sides[side].call, options.concurrency, ms, { bench: process.pid, 'mcp server': sides[side].serverPid });
  await run('pool', 1_000);
  await run('bare', 1_000);
  for (const side of ['pool', 'bare', 'bare', 'pool', 'bare', 'pool', 'pool', 'bare'] as const) quarters[side].push(await run(side, (options.seconds * 1000) / 4));
  const combine = (runs: Awaited<ReturnType<typeof callsFor>>[]): McpThroughput => {
    const latency = runs.flatMap((r) => r.latency);
    const seconds = runs.reduce((sum, r) => sum + r.seconds, 0);
    const cpu: Record<string, CpuUse> = {};
    for (const role of Object.keys(runs[0]!.cpu)) {
      cpu[role] = {
        average: runs.reduce((sum, r) => sum + r.cpu[role]!.average, 0) / runs.length,
        peak: Math.max(...runs.map((r) => r.cpu[role]!.peak)),
        seconds: runs.reduce((sum, r) => sum + r.cpu[role]!.seconds, 0),
      };
    }
    const total = (pick: (r: (typeof runs)[number]) => number) => runs.reduce((sum, r) => sum + pick(r), 0);
    return { callsPerSecond: latency.length / seconds, calls: latency.length, errors: total((r) => r.errors), latency: summarize(latency), cpu, abortListenerWarnings: total((r) => r.warnings) };
  };
  return { pool: combine(quarters.pool), bare: combine(quarters.bare) };
}

/**
 * MCP through the worker's pool against `@modelcontextprotocol/server-everything` on loopback,
 * over streamable HTTP and stdio: an echo call through McpPool beside the bare SDK Client, a
 * user's first call on a cold pool beside a warm one, and calls per second at `concurrency`.
 * The pool runs in this process, as in a worker, with the worker's defaults.
 */
export async function measureMcp(teardown: Teardown, options: McpBenchOptions): Promise<McpFigures> {
  const http = await startEverything('streamableHttp');
  teardown.add('MCP server (streamable HTTP)', () => http.stop());
  // The worker refuses loopback servers unless allowlisted; the bench allowlists its own.
  const allowlist = [`127.0.0.1:${http.port}`];
  const transports: McpTransportFigures[] = [];
  try {
    transports.push(await measureTransport({ name: 'everything', transport: 'streamable-http', url: http.url }, allowlist, http.proc.pid!, teardown, options));
    transports.push(await measureTransport({ name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] }, allowlist, undefined, teardown, options));
  } finally {
    await http.stop();
  }
  const { checkUrl: _check, onStatus: _status, now: _now, listLimits: _limits, ...poolOptions } = workerPoolOptions(allowlist);
  return {
    server: `@modelcontextprotocol/server-everything ${serverVersion()}`,
    calls: options.calls,
    warmup: options.warmup,
    users: options.users,
    concurrency: options.concurrency,
    seconds: options.seconds,
    targetOverheadMs: 0.5,
    pool: poolOptions,
    transports,
  };
}

/**
 * One transport's figures, with a pool of its own (closed at the end, so its health pings do
 * not land in the next transport's figures) and a bare client on its own connection.
 * @param httpPid The streamable HTTP server's pid; a stdio server's comes from its transport.
 */
async function measureTransport(config: McpServerConfig, allowlist: string[], httpPid: number | undefined, teardown: Teardown, options: McpBenchOptions): Promise<McpTransportFigures> {
  const { log } = options;
  const label = config.transport;
  const pool = new McpPool(workerPoolOptions(allowlist));
  teardown.add(`MCP pool (${label})`, () => pool.close());
  const bareTransport =
    config.transport === 'stdio' ? new StdioClientTransport({ command: config.command!, args: config.args, stderr: 'ignore' }) : new StreamableHTTPClientTransport(new URL(config.url!));
  teardown.add(`MCP bare client (${label})`, () => bareTransport.close());
  try {
    const lease = await pool.acquire({ kind: 'global' }, config);
    const bare = await bareClient(bareTransport);
    const viaPool = () => callViaLease(lease);
    const viaBare = () => bare.callTool({ name: 'echo', arguments: ECHO });
    log(`MCP ${label}: ${options.calls} echo calls each through the pool and the bare SDK client`);
    const call = await compareCalls(viaPool, viaBare, options);
    log(`MCP ${label}: first call of ${options.users} new users, cold and warm`);
    const firstCall = { ...(await measureFirstCalls(config, allowlist, options.users)), refusedWithDefaultBreaker: await countRefusedUsers(config, allowlist, options.users) };
    log(`MCP ${label}: ${options.concurrency} concurrent callers for ${options.seconds} s per side`);
    const barePid = bareTransport instanceof StdioClientTransport ? bareTransport.pid : null;
    const throughput = await measureThroughput(
      { pool: { call: viaPool, serverPid: httpPid ?? lease.connection.pid ?? NaN }, bare: { call: viaBare, serverPid: httpPid ?? barePid ?? NaN } },
      options,
    );
    lease.release();
    return { transport: config.transport as McpTransportFigures['transport'], call, firstCall, throughput };
  } finally {
    await bareTransport.close();
    await pool.close();
  }
}

function serverVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', `file://${EVERYTHING}`), 'utf8')) as { version: string }).version;
  } catch {
    return '(version unknown)';
  }
}
