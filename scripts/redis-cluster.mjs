/**
 * A throw-away Redis Cluster on loopback, built from the machine's Debian `redis-server`, for
 * tests and benchmarks: N masters with R replicas each, every node on 127.0.0.1 only, no
 * persistence, and settings that let a replica take over a killed master within a few seconds.
 *
 * The cluster is formed with `redis-cli --cluster create`, then waited on until every node
 * agrees: `cluster_state:ok`, all 16384 slots served, every replica attached and synced.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import {
  aptInstall,
  findExecutable,
  freePort,
  redisAnswersPing,
  refuseIfRunning,
  spawnServer,
  tailOf,
  waitUntilReady,
} from './local-services.mjs';

const HOST = '127.0.0.1';
const SLOTS = 16_384;

/**
 * @typedef {object} RedisClusterHandle
 * @property {string} seeds `127.0.0.1:p1,127.0.0.1:p2,...`: every node, masters and replicas.
 * @property {Array<{ port: number, pid: number }>} nodes Every node as started (killed ones included).
 * @property {number} startedInMs Milliseconds from the call to a healthy cluster.
 * @property {() => Promise<Array<{ port: number, slots: Array<[number, number]> }>>} masters The masters
 *   that own slots, as a live node's CLUSTER NODES has them (a master that failed but whose slots
 *   were not taken over yet is still listed), ordered by their first slot.
 * @property {(slot: number) => Promise<number>} masterOfSlot The port of the master owning `slot`.
 * @property {(port: number) => Promise<void>} kill SIGKILLs that node's process (and any child it
 *   forked) and resolves once it has exited.
 * @property {(deadPort: number, timeoutMs?: number) => Promise<number>} waitForFailover Waits until
 *   every live node reports `cluster_state:ok` and sees the slots the dead node owned served by one
 *   live master; resolves with that master's port (the replica promoted in its place).
 * @property {() => Promise<void>} stop Stops every node still running; safe to call again.
 */

/**
 * @typedef {object} ClusterNode One line of CLUSTER NODES.
 * @property {string} id
 * @property {number} port
 * @property {string[]} flags e.g. `myself`, `master`, `slave`, `fail?`, `fail`, `handshake`.
 * @property {string | null} masterId The master a replica follows.
 * @property {number} configEpoch
 * @property {string} linkState `connected` or `disconnected`.
 * @property {Array<[number, number]>} slots Owned slot ranges (migrating/importing ones left out).
 */

/**
 * @typedef {object} RunningNode
 * @property {number} index
 * @property {number} port
 * @property {number} busPort
 * @property {string} dir
 * @property {string} logFile
 * @property {import('./local-services.mjs').SpawnedServer} server
 */

/**
 * Starts a Redis Cluster on loopback and waits until it is healthy.
 *
 * @param {object} options
 * @param {string} options.dir Folder for the nodes (one `node-<i>` sub-folder each: nodes.conf, redis.log, redis.pid).
 * @param {number} [options.masters] How many masters (at least 3; default 3).
 * @param {number} [options.replicasPerMaster] Replicas of each master (default 1).
 * @param {number} [options.nodeTimeoutMs] `cluster-node-timeout` (default 1000): how soon a silent node is suspected.
 * @param {number} [options.timeoutMs] How long starting may take, all nodes and the cluster's forming included (default 60 s).
 * @returns {Promise<RedisClusterHandle>}
 * @throws {Error} When a node does not start or the cluster is not healthy in time (with the tail of the logs).
 */
export async function startRedisCluster({ dir, masters = 3, replicasPerMaster = 1, nodeTimeoutMs = 1000, timeoutMs = 60_000 }) {
  if (!Number.isInteger(masters) || masters < 3) throw new Error(`a Redis Cluster needs at least 3 masters (got ${masters})`);
  if (!Number.isInteger(replicasPerMaster) || replicasPerMaster < 0) throw new Error(`replicasPerMaster must be an integer >= 0 (got ${replicasPerMaster})`);
  if (!Number.isInteger(nodeTimeoutMs) || nodeTimeoutMs < 100) throw new Error(`nodeTimeoutMs must be an integer >= 100 (got ${nodeTimeoutMs})`);
  const started = Date.now();
  const deadline = started + timeoutMs;
  const { redisServer, redisCli } = ensureRedisBinaries();
  dir = path.resolve(dir);
  await mkdir(dir, { recursive: true });

  const total = masters * (1 + replicasPerMaster);
  /** @type {Set<number>} Ports handed out to this cluster (client and bus ports), so no two nodes share one. */
  const reserved = new Set();
  /** @type {RunningNode[]} */
  const running = [];
  /** @type {Promise<void> | undefined} */
  let stopping;
  // spawnServer() adds a process 'exit' listener per node (removed when the node exits): with
  // more than a few nodes, Node would warn of a listener leak.
  const releaseListeners = allowExitListeners(total);
  const stop = () =>
    (stopping ??= Promise.allSettled(running.map(stopNode)).then(() => {
      releaseListeners();
    }));
  const logTails = () => logTailsOf(running);

  try {
    const results = await Promise.allSettled(
      Array.from({ length: total }, (_, index) =>
        startNode({ binary: redisServer, index, dir: path.join(dir, `node-${index}`), reserved, nodeTimeoutMs, deadline, running }),
      ),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw /** @type {PromiseRejectedResult} */ (failed).reason;
    running.sort((a, b) => a.index - b.index);

    const addresses = running.map((n) => `${HOST}:${n.port}`);
    const create = await runCommand(
      redisCli,
      ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'],
      deadline - Date.now(),
    );
    if (create.code !== 0) {
      throw new Error(`redis-cli --cluster create failed (${create.description}):\n${lastLines(create.output, 30)}\n${await logTails()}`);
    }

    await waitUntil({
      what: `the Redis Cluster of ${total} nodes to be healthy`,
      deadline,
      check: async () => {
        const gone = running.find((n) => n.server.hasExited());
        if (gone) throw new Error(`redis-server ${HOST}:${gone.port} exited (${gone.server.exitDescription()}) while the cluster was forming.\n${await logTails()}`);
        return clusterProblem(running, { masters, replicasPerMaster });
      },
      details: async () => `redis-cli said:\n${lastLines(create.output, 12)}\n${await logTails()}`,
    });
  } catch (error) {
    await stop();
    throw error;
  }

  /** @type {Map<number, Array<[number, number]>>} The slots each port owned, as last read. */
  let knownSlots = new Map();
  /** @type {Map<number, Array<[number, number]>>} The slots a node owned when kill() ended it. */
  const slotsAtKill = new Map();
  const alive = () => running.filter((n) => !n.server.hasExited());
  const byPort = (/** @type {number} */ port) => {
    const node = running.find((n) => n.port === port);
    if (!node) throw new Error(`no node of this cluster listens on ${HOST}:${port} (nodes: ${running.map((n) => n.port).join(', ')})`);
    return node;
  };

  /** @param {number[]} [exceptPorts] */
  const readView = async (exceptPorts = []) => {
    /** @type {unknown} */
    let lastError = new Error('no node of the cluster is running');
    for (const node of alive()) {
      if (exceptPorts.includes(node.port)) continue;
      try {
        const view = parseClusterNodes(String(await onNode(node.port, (redis) => redis.call('CLUSTER', 'NODES'))));
        knownSlots = new Map(view.filter((n) => n.slots.length > 0).map((n) => [n.port, n.slots]));
        return view;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  };
  const mastersOf = (/** @type {ClusterNode[]} */ view) =>
    view
      .filter((n) => n.flags.includes('master') && n.slots.length > 0)
      .map((n) => ({ port: n.port, slots: n.slots.map(([a, b]) => /** @type {[number, number]} */ ([a, b])) }))
      .sort((a, b) => a.slots[0][0] - b.slots[0][0]);
  // Read once so that kill() knows every master's slots even when the cluster is broken by then.
  await readView().catch(() => undefined);

  return {
    seeds: running.map((n) => `${HOST}:${n.port}`).join(','),
    nodes: running.map((n) => ({ port: n.port, pid: /** @type {number} */ (n.server.child.pid) })),
    startedInMs: Date.now() - started,
    masters: async () => mastersOf(await readView()),
    masterOfSlot: async (slot) => {
      if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS) throw new Error(`slot must be an integer in 0..${SLOTS - 1} (got ${slot})`);
      const owners = mastersOf(await readView());
      const owner = owners.find((m) => m.slots.some(([a, b]) => a <= slot && slot <= b));
      if (!owner) throw new Error(`no master owns slot ${slot}`);
      return owner.port;
    },
    kill: async (port) => {
      const node = byPort(port);
      if (node.server.hasExited()) return;
      // What it owned, read from another node just before (the cached view if none answers).
      const owned = await readView([port])
        .then((view) => view.find((n) => n.port === port)?.slots ?? [])
        .catch(() => knownSlots.get(port) ?? []);
      slotsAtKill.set(port, owned);
      await killNode(node);
    },
    waitForFailover: async (deadPort, failoverTimeoutMs = 20_000) => {
      if (stopping) throw new Error('the cluster was stopped');
      const dead = byPort(deadPort);
      if (!dead.server.hasExited()) throw new Error(`${HOST}:${deadPort} is still running: kill(${deadPort}) first`);
      const slots = slotsAtKill.get(deadPort) ?? knownSlots.get(deadPort) ?? [];
      if (slots.length === 0) throw new Error(`${HOST}:${deadPort} owned no slots when it died: there is nothing to fail over`);
      /** @type {number | undefined} */
      let promoted;
      await waitUntil({
        what: `a replica to take over the slots of ${HOST}:${deadPort} (${formatRanges(slots)})`,
        deadline: Date.now() + failoverTimeoutMs,
        check: async () => {
          const result = await failoverProblem(alive(), deadPort, slots);
          if (typeof result === 'number') {
            promoted = result;
            return null;
          }
          return result;
        },
        details: logTails,
      });
      await readView().catch(() => undefined);
      return /** @type {number} */ (promoted);
    },
    stop,
  };
}

/**
 * Installs Debian's redis-server (which brings redis-cli) when either program is missing.
 *
 * @returns {{ redisServer: string, redisCli: string }}
 */
function ensureRedisBinaries() {
  if (!findExecutable('redis-server') || !findExecutable('redis-cli')) {
    aptInstall(['redis-server'], ['redis-server'], (line) => process.stderr.write(`${line}\n`));
  }
  const redisServer = findExecutable('redis-server');
  const redisCli = findExecutable('redis-cli');
  if (!redisServer || !redisCli) throw new Error('apt-get finished but redis-server or redis-cli is still not on PATH.');
  return { redisServer, redisCli };
}

/**
 * Raises the process's listener limit by `count` until the returned function is called.
 *
 * @param {number} count
 * @returns {() => void}
 */
function allowExitListeners(count) {
  const limit = process.getMaxListeners();
  if (limit === 0) return () => undefined; // unlimited already
  process.setMaxListeners(limit + count);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const now = process.getMaxListeners();
    if (now !== 0) process.setMaxListeners(Math.max(now - count, 1));
  };
}

/**
 * A free port on 127.0.0.1 that no other node of this cluster was given.
 *
 * @param {Set<number>} reserved
 */
async function reservePort(reserved) {
  for (;;) {
    const port = await freePort();
    if (!reserved.has(port)) {
      reserved.add(port);
      return port;
    }
  }
}

/**
 * Starts one cluster node in its folder and waits until it answers, retrying on other ports when
 * another process takes its port first. The node joins `running` as soon as it is spawned, so a
 * failure elsewhere stops it too.
 *
 * @param {{ binary: string, index: number, dir: string, reserved: Set<number>, nodeTimeoutMs: number, deadline: number, running: RunningNode[] }} options
 * @returns {Promise<RunningNode>}
 */
async function startNode({ binary, index, dir, reserved, nodeTimeoutMs, deadline, running }) {
  await mkdir(dir, { recursive: true });
  const pidFile = path.join(dir, 'redis.pid');
  const logFile = path.join(dir, 'redis.log');
  await refuseIfRunning(pidFile, 'redis', dir);
  for (let tries = 1; ; tries++) {
    // A node only joins a new cluster with an empty nodes.conf.
    await Promise.all(['nodes.conf', 'redis.log', 'dump.rdb'].map((name) => rm(path.join(dir, name), { force: true })));
    const port = await reservePort(reserved);
    // The bus port is chosen too: the default (port + 10000) may be taken or past 65535.
    const busPort = await reservePort(reserved);
    const args = [
      '--bind', HOST,
      '--port', String(port),
      '--protected-mode', 'yes',
      '--daemonize', 'no',
      '--dir', dir,
      '--pidfile', pidFile,
      '--logfile', logFile,
      '--appendonly', 'no',
      '--save', '',
      '--cluster-enabled', 'yes',
      '--cluster-config-file', 'nodes.conf',
      '--cluster-port', String(busPort),
      '--cluster-node-timeout', String(nodeTimeoutMs),
      // A replica may always stand for election, however long since it last heard its master.
      '--cluster-replica-validity-factor', '0',
      '--repl-ping-replica-period', '1',
      // Replicas sync at once rather than waiting 5 s for others to share the transfer.
      '--repl-diskless-sync-delay', '0',
      // A stopping master does not wait up to 10 s for its replicas to catch up.
      '--shutdown-timeout', '0',
    ];
    const server = spawnServer(binary, args, `redis-server ${HOST}:${port}`);
    /** @type {RunningNode} */
    const node = { index, port, busPort, dir, logFile, server };
    running.push(node);
    try {
      await waitUntilReady({
        name: `redis-server ${HOST}:${port} (${path.basename(dir)})`,
        server,
        // PONG alone could come from another server that took the port: the pid must be ours.
        probe: async () => (await redisAnswersPing(port)) && (await onNode(port, (r) => r.info('server')).catch(() => '')).includes(`process_id:${server.child.pid}\r`),
        timeoutMs: Math.max(deadline - Date.now(), 1),
        logTail: () => tailOf(logFile, server.output),
      });
      return node;
    } catch (error) {
      await stopNode(node);
      running.splice(running.indexOf(node), 1);
      const clash = /address already in use|EADDRINUSE/i.test(String(error));
      if (!clash || tries >= 3) throw error;
    }
  }
}

/**
 * Stops a node with SIGTERM (SIGKILL after 5 s), then kills whatever it forked and left behind.
 *
 * @param {RunningNode} node
 */
async function stopNode(node) {
  const pid = node.server.child.pid;
  const children = pid && !node.server.hasExited() ? descendantsOf(pid) : [];
  await node.server.stop(5_000);
  await killAll(children);
}

/**
 * SIGKILLs a node and every process it forked; resolves once they have all exited.
 *
 * @param {RunningNode} node
 */
async function killNode(node) {
  const pid = node.server.child.pid;
  if (!pid || node.server.hasExited()) return;
  const children = descendantsOf(pid);
  node.server.child.kill('SIGKILL');
  await killAll(children);
  await node.server.exited;
}

/**
 * SIGKILLs these processes and waits (up to 5 s) until none of them runs.
 *
 * @param {number[]} pids
 */
async function killAll(pids) {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  const until = Date.now() + 5_000;
  while (pids.some(isRunning) && Date.now() < until) await sleep(20);
}

/**
 * Every live process below `pid`, read from /proc (this kernel has no `children` files).
 *
 * @param {number} pid
 * @returns {number[]}
 */
function descendantsOf(pid) {
  /** @type {Array<{ pid: number, ppid: number }>} */
  const table = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.push({ pid: Number(name), ppid: Number(ppid) });
    } catch {
      // it ended while we looked
    }
  }
  const found = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = /** @type {number} */ (queue.shift());
    for (const p of table) {
      if (p.ppid === parent) {
        found.push(p.pid);
        queue.push(p.pid);
      }
    }
  }
  return found;
}

/**
 * Whether `pid` runs (a zombie or a vanished process does not).
 *
 * @param {number} pid
 */
function isRunning(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * Opens a probe connection to one node on loopback: no retries, no offline queue, so a node that
 * does not answer within `timeoutMs` is an error. The caller closes it.
 *
 * @param {number} port
 * @param {number} [timeoutMs] how long connecting may take
 * @param {number} [commandTimeoutMs] how long a command may take (as long as connecting unless given)
 * @returns {Promise<Redis>}
 */
export async function connectNode(port, timeoutMs = 1_000, commandTimeoutMs = timeoutMs) {
  const redis = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    enableReadyCheck: false,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return redis;
  } catch (err) {
    redis.disconnect();
    throw err;
  }
}

/**
 * Runs `fn` on a fresh connection to one node and always closes it (see {@link connectNode}).
 *
 * @template T
 * @param {number} port
 * @param {(redis: Redis) => Promise<T>} fn
 * @param {number} [timeoutMs]
 * @returns {Promise<T>}
 */
async function onNode(port, fn, timeoutMs = 1_000) {
  const redis = await connectNode(port, timeoutMs);
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/**
 * Parses CLUSTER NODES: `<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>...`
 *
 * @param {string} text
 * @returns {ClusterNode[]}
 */
export function parseClusterNodes(text) {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [id, address, flags, masterId, , , configEpoch, linkState, ...slotFields] = line.split(' ');
      /** @type {Array<[number, number]>} */
      const slots = [];
      for (const field of slotFields) {
        if (field.startsWith('[')) continue; // [slot->-id] migrating, [slot-<-id] importing
        const [from, to] = field.split('-').map(Number);
        slots.push([from, to ?? from]);
      }
      return {
        id,
        port: Number(address.split('@')[0].split(':').pop()),
        flags: flags.split(','),
        masterId: masterId === '-' ? null : masterId,
        configEpoch: Number(configEpoch),
        linkState,
        slots,
      };
    });
}

/**
 * @param {string} info The text of CLUSTER INFO or INFO.
 * @returns {Record<string, string>}
 */
function parseInfo(info) {
  /** @type {Record<string, string>} */
  const fields = {};
  for (const line of info.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) fields[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return fields;
}

/**
 * What one node says of the cluster: CLUSTER INFO, CLUSTER NODES, and its own replication link.
 *
 * @param {number} port
 */
async function viewOf(port) {
  return onNode(port, async (redis) => {
    const info = parseInfo(String(await redis.call('CLUSTER', 'INFO')));
    const nodes = parseClusterNodes(String(await redis.call('CLUSTER', 'NODES')));
    const myself = nodes.find((n) => n.flags.includes('myself'));
    const replication = myself?.flags.includes('slave') ? parseInfo(await redis.info('replication')) : undefined;
    return { info, nodes, myself, replication };
  });
}

/**
 * Why the cluster is not healthy yet, in one line, or null when every node agrees that it is.
 *
 * @param {RunningNode[]} running
 * @param {{ masters: number, replicasPerMaster: number }} expected
 * @returns {Promise<string | null>}
 */
async function clusterProblem(running, { masters, replicasPerMaster }) {
  const total = running.length;
  for (const node of running) {
    const name = `${HOST}:${node.port}`;
    if (node.server.hasExited()) return `${name} exited (${node.server.exitDescription()})`;
    /** @type {Awaited<ReturnType<typeof viewOf>>} */
    let view;
    try {
      view = await viewOf(node.port);
    } catch (error) {
      return `${name} did not answer: ${/** @type {Error} */ (error).message}`;
    }
    const { info, nodes, replication } = view;
    if (info.cluster_state !== 'ok') return `${name} reports cluster_state:${info.cluster_state}`;
    if (info.cluster_slots_ok !== String(SLOTS)) return `${name} reports cluster_slots_ok:${info.cluster_slots_ok}`;
    if (nodes.length !== total) return `${name} knows ${nodes.length} of ${total} nodes`;
    const unwell = nodes.find((n) => n.flags.some((f) => ['fail', 'fail?', 'handshake', 'noaddr'].includes(f)) || n.linkState !== 'connected');
    if (unwell) return `${name} sees ${HOST}:${unwell.port} as ${unwell.flags.join(',')} (${unwell.linkState})`;
    const owners = nodes.filter((n) => n.flags.includes('master') && n.slots.length > 0);
    if (owners.length !== masters) return `${name} sees ${owners.length} of ${masters} masters owning slots`;
    const covered = owners.reduce((sum, n) => sum + n.slots.reduce((s, [a, b]) => s + b - a + 1, 0), 0);
    if (covered !== SLOTS) return `${name} sees ${covered} of ${SLOTS} slots owned`;
    for (const owner of owners) {
      const replicas = nodes.filter((n) => n.flags.includes('slave') && n.masterId === owner.id).length;
      if (replicas !== replicasPerMaster) return `${name} sees ${replicas} of ${replicasPerMaster} replicas of ${HOST}:${owner.port}`;
    }
    if (replication && replication.master_link_status !== 'up') return `replica ${name} has master_link_status:${replication.master_link_status}`;
  }
  return null;
}

/**
 * Whether the dead node's slots are served again: every live node reports `cluster_state:ok`
 * and has all of those slots on the same live master. Returns that master's port, or why not.
 *
 * @param {RunningNode[]} live
 * @param {number} deadPort
 * @param {Array<[number, number]>} slots
 * @returns {Promise<number | string>}
 */
async function failoverProblem(live, deadPort, slots) {
  const livePorts = new Set(live.map((n) => n.port));
  /** @type {number | undefined} */
  let agreed;
  for (const node of live) {
    const name = `${HOST}:${node.port}`;
    /** @type {Awaited<ReturnType<typeof viewOf>>} */
    let view;
    try {
      view = await viewOf(node.port);
    } catch (error) {
      return `${name} did not answer: ${/** @type {Error} */ (error).message}`;
    }
    if (view.info.cluster_state !== 'ok') return `${name} reports cluster_state:${view.info.cluster_state}`;
    const owners = new Set();
    for (const [from, to] of slots) {
      for (const [a, b] of [[from, from], [to, to], [from, to]]) {
        const owner = view.nodes.find((n) => n.flags.includes('master') && n.slots.some(([x, y]) => x <= a && b <= y));
        owners.add(owner?.port);
      }
    }
    if (owners.size !== 1) return `${name} sees the slots of ${HOST}:${deadPort} split over ${[...owners].map((p) => p ?? 'nobody').join(', ')}`;
    const [owner] = /** @type {Array<number | undefined>} */ ([...owners]);
    if (owner === undefined || owner === deadPort) return `${name} still has the slots of ${HOST}:${deadPort} on it`;
    if (!livePorts.has(owner)) return `${name} has the slots of ${HOST}:${deadPort} on ${HOST}:${owner}, which is not running`;
    if (agreed !== undefined && agreed !== owner) return `nodes disagree on who took over: ${HOST}:${agreed} or ${HOST}:${owner}`;
    agreed = owner;
  }
  return agreed ?? 'no node is running';
}

/**
 * Polls `check` (null means done) every 50-200 ms until it passes or the deadline is reached.
 *
 * @param {{ what: string, deadline: number, check: () => Promise<string | null>, details: () => Promise<string> }} options
 */
async function waitUntil({ what, deadline, check, details }) {
  const started = Date.now();
  for (let pause = 50; ; pause = Math.min(pause * 2, 200)) {
    const problem = await check();
    if (problem === null) return;
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${Date.now() - started} ms waiting for ${what}; last: ${problem}\n${await details()}`);
    }
    await sleep(Math.min(pause, Math.max(deadline - Date.now(), 0)));
  }
}

/**
 * The last lines of every node's log, one block per node.
 *
 * @param {RunningNode[]} running
 */
async function logTailsOf(running) {
  const blocks = await Promise.all(
    running.map(async (n) => `--- ${HOST}:${n.port} (${path.basename(n.dir)}) log tail ---\n${lastLines(await tailOf(n.logFile, n.server.output), 12)}`),
  );
  return blocks.join('\n');
}

/**
 * Runs a program to its end (SIGKILLed at the deadline), keeping its output.
 *
 * @param {string} binary
 * @param {string[]} args
 * @param {number} timeoutMs
 * @returns {Promise<{ code: number | null, description: string, output: string }>}
 */
function runCommand(binary, args, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TERM: 'dumb' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, Math.max(timeoutMs, 1));
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, description: `spawn error: ${error.message}`, output });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const description = timedOut ? `timed out after ${timeoutMs} ms` : signal ? `signal ${signal}` : `exit ${code}`;
      resolve({ code: timedOut ? null : code, description, output });
    });
  });
}

/**
 * @param {string} text
 * @param {number} count
 */
function lastLines(text, count) {
  return text.trim().split('\n').slice(-count).join('\n');
}

/** @param {Array<[number, number]>} ranges */
function formatRanges(ranges) {
  return ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',');
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
