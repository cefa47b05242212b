/**
 * Local Redis and MariaDB servers started from the machine's Debian packages.
 *
 * Used by `npm start` (data kept in a local folder so history survives a restart) and by the
 * jest harness (one throw-away pair per run). Everything binds to 127.0.0.1 only.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants as fsConstants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';

/** Directories searched besides PATH: Debian puts mariadbd in /usr/sbin, often not on a user's PATH. */
const EXTRA_BIN_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin', '/usr/local/bin', '/usr/bin'];

/** Unix socket paths longer than this do not fit in sockaddr_un (108 bytes with the NUL). */
const MAX_SOCKET_PATH = 100;

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * @typedef {object} ServerProcessHandle
 * @property {import('node:child_process').ChildProcess} process The server process.
 * @property {() => Promise<void>} stop Asks the server to shut down and resolves once it has exited.
 * @property {number} startedInMs Milliseconds from spawn (or data directory creation) to ready.
 */

/**
 * @typedef {ServerProcessHandle & { url: string, port: number }} RedisHandle
 */

/**
 * @typedef {ServerProcessHandle & {
 *   host: string, port: number, user: string, password: string, database: string,
 *   socketPath: string,
 * }} MariadbHandle `socketPath` reaches root without a password (root has no TCP login).
 */

/**
 * Finds an executable on PATH or in the sbin directories.
 *
 * @param {string} name Program name, e.g. `mariadbd`.
 * @returns {string | null} Absolute path, or null when it is not installed.
 */
export function findExecutable(name) {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...EXTRA_BIN_DIRS];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Installs redis-server and mariadb-server with apt-get when either server is missing.
 *
 * @param {{ log?: (line: string) => void }} [options] Where progress goes (stderr by default).
 * @returns {Promise<void>}
 * @throws {Error} When the packages cannot be installed (with the command that failed).
 */
export async function ensureServerPackages({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const missing = [];
  if (!findExecutable('redis-server')) missing.push('redis-server');
  if (!findExecutable('mariadbd') || !findExecutable('mariadb-install-db')) missing.push('mariadb-server');
  if (missing.length === 0) return;

  aptInstall(missing, ['redis-server', 'mariadb-server'], log);
  if (!findExecutable('redis-server') || !findExecutable('mariadbd')) {
    throw new Error('apt-get finished but redis-server or mariadbd is still not on PATH or in /usr/sbin.');
  }
  log('[local-services] server packages installed');
}

/**
 * Installs bubblewrap (the sandbox of users' shell commands, skill scripts and stdio MCP servers)
 * and slirp4netns (a network of their own for the servers an operator grants one) when missing.
 *
 * @param {{ log?: (line: string) => void }} [options] Where progress goes (stderr by default).
 * @throws {Error} When the packages cannot be installed (with the command that failed).
 */
export function ensureSandboxPackages({ log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const missing = [];
  if (!findExecutable('bwrap')) missing.push('bubblewrap');
  if (!findExecutable('slirp4netns')) missing.push('slirp4netns');
  if (missing.length === 0) return;
  aptInstall(missing, missing, log);
  if (!findExecutable('bwrap')) throw new Error('apt-get finished but bwrap is still not on PATH.');
  log('[local-services] sandbox packages installed');
}

/**
 * Finds promtool (Prometheus's metrics linter, which the metrics tests run) or takes it out of
 * Debian's `prometheus` package when it is absent. The package is downloaded and unpacked into
 * a cache folder, not installed: installing it would start a Prometheus server (a service,
 * which a container without systemd cannot run) and pull in its web UI's dependencies, and
 * promtool is one static binary.
 *
 * @param {{ log?: (line: string) => void, cacheDir?: string }} [options] Where progress goes
 *   (stderr by default); where the package is unpacked (`~/.cache/dataagent/prometheus`).
 * @returns {string} The path of promtool.
 * @throws {Error} When apt-get cannot download the package (with the command that failed).
 */
export function ensurePromtool({ log = (line) => process.stderr.write(`${line}\n`), cacheDir } = {}) {
  const onPath = findExecutable('promtool');
  if (onPath) return onPath;
  const dir = cacheDir ?? path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'dataagent', 'prometheus');
  const unpacked = path.join(dir, 'usr', 'bin', 'promtool');
  if (existsSync(unpacked)) return unpacked;

  const apt = findExecutable('apt-get');
  const dpkgDeb = findExecutable('dpkg-deb');
  if (!apt || !dpkgDeb) throw new Error('promtool not found and apt-get or dpkg-deb is unavailable: install Prometheus\'s promtool with your package manager.');
  mkdirSync(dir, { recursive: true });
  /** @param {string} cmd @param {string[]} args */
  const run = (cmd, args) => {
    log(`[local-services] ${[cmd, ...args].join(' ')}`);
    return spawnSync(cmd, args, { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status === 0;
  };
  log('[local-services] promtool missing: unpacking it from Debian\'s prometheus package');
  if (!run(apt, ['download', 'prometheus'])) {
    // A fresh machine's package lists may be empty or stale; updating them needs root.
    const sudo = isRoot ? null : findExecutable('sudo');
    if (!isRoot && !sudo) throw new Error('apt-get download prometheus failed and updating the package lists needs root: run `apt-get update` as root, or install promtool.');
    if (!(sudo ? run(sudo, [apt, 'update']) : run(apt, ['update'])) || !run(apt, ['download', 'prometheus'])) {
      throw new Error('apt-get download prometheus failed; install promtool by hand and retry.');
    }
  }
  const deb = readdirSync(dir).find((name) => /^prometheus_.*\.deb$/.test(name));
  if (!deb || !run(dpkgDeb, ['-x', deb, '.']) || !existsSync(unpacked)) throw new Error(`could not unpack promtool from ${deb ?? 'the prometheus package'} into ${dir}.`);
  rmSync(path.join(dir, deb), { force: true });
  // Only promtool is wanted; the server binary is most of the package's size.
  rmSync(path.join(dir, 'usr', 'bin', 'prometheus'), { force: true });
  return unpacked;
}

/**
 * Installs Debian packages with apt-get, without recommends. Runs `apt-get update` and retries
 * once when the first install fails (a fresh machine's package lists may be empty or stale).
 * Uses sudo unless root.
 *
 * @param {string[]} missing What is missing, named in progress lines and errors.
 * @param {string[]} packages The Debian packages to install.
 * @param {(line: string) => void} log Where progress goes.
 * @throws {Error} When apt-get is unavailable, root is needed and sudo is absent, or the install fails.
 */
export function aptInstall(missing, packages, log) {
  const apt = findExecutable('apt-get');
  if (!apt) {
    throw new Error(`${missing.join(' and ')} not found and apt-get is unavailable: install them with your package manager.`);
  }
  const sudo = isRoot ? null : findExecutable('sudo');
  if (!isRoot && !sudo) {
    throw new Error(`${missing.join(' and ')} not found; installing needs root: run \`apt-get install -y ${packages.join(' ')}\` as root.`);
  }
  /** @param {string[]} args */
  const aptGet = (args) => {
    const [cmd, argv] = sudo ? [sudo, [apt, ...args]] : [apt, args];
    log(`[local-services] ${sudo ? 'sudo ' : ''}apt-get ${args.join(' ')}`);
    const result = spawnSync(cmd, argv, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    return result.status === 0;
  };
  const install = ['install', '-y', '--no-install-recommends', ...packages];

  log(`[local-services] ${missing.join(' and ')} missing: installing from apt`);
  if (!aptGet(install)) {
    if (!aptGet(['update']) || !aptGet(install)) {
      throw new Error(`apt-get install ${packages.join(' ')} failed; install the packages by hand and retry.`);
    }
  }
}

/**
 * Picks a TCP port that is free on 127.0.0.1 right now.
 *
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read the free port'))));
    });
  });
}

/**
 * Starts redis-server on 127.0.0.1.
 *
 * @param {object} options
 * @param {string} options.dir Data directory (created if missing); holds the AOF/RDB files and redis.log.
 * @param {number} [options.port] TCP port; 0 or undefined picks a free one.
 * @param {boolean} [options.persist] Append-only file + snapshots (default true); false for throw-away test data.
 * @param {number} [options.timeoutMs] How long to wait for PONG (default 20 s).
 * @returns {Promise<RedisHandle>}
 * @throws {Error} When the server exits or does not answer in time (with the log tail).
 */
export async function startRedis({ dir, port, persist = true, timeoutMs = 20_000 }) {
  const binary = findExecutable('redis-server');
  if (!binary) throw new Error('redis-server is not installed (run ensureServerPackages() first).');
  dir = path.resolve(dir);
  await mkdir(dir, { recursive: true });
  const pidFile = path.join(dir, 'redis.pid');
  await refuseIfRunning(pidFile, 'redis', dir);
  const logFile = path.join(dir, 'redis.log');

  return retryOnPortClash(port, async (chosenPort) => {
    const started = Date.now();
    const args = [
      '--bind', '127.0.0.1',
      '--port', String(chosenPort),
      '--protected-mode', 'yes',
      '--daemonize', 'no',
      '--dir', dir,
      '--pidfile', pidFile,
      '--logfile', logFile,
      '--appendonly', persist ? 'yes' : 'no',
      '--appendfsync', 'everysec',
      // RDB snapshots as a second copy; none for throw-away data.
      '--save', persist ? '3600 1 300 100 60 10000' : '',
    ];
    const server = spawnServer(binary, args, 'redis-server');
    const logTail = () => tailOf(logFile, server.output);
    try {
      await waitUntilReady({ name: 'redis-server', server, probe: () => redisAnswersPing(chosenPort), timeoutMs, logTail });
    } catch (error) {
      await server.stop(5_000);
      throw error;
    }
    return {
      url: `redis://127.0.0.1:${chosenPort}`,
      port: chosenPort,
      process: server.child,
      startedInMs: Date.now() - started,
      stop: () => server.stop(10_000),
    };
  }, () => readTail(logFile));
}

/**
 * Starts mariadbd on 127.0.0.1, creating the data directory on first use, then provisions
 * `database` and `user` (idempotent: the password is reset to `password` on every start).
 *
 * Root can only log in through the unix socket (`socketPath`), never over TCP.
 *
 * @param {object} options
 * @param {string} options.dir Folder for the data directory, socket, pid file and error log.
 * @param {number} [options.port] TCP port; 0 or undefined picks a free one.
 * @param {string} options.database Database to create (utf8mb4).
 * @param {string} options.user Application user, granted everything on `database`.
 * @param {string} options.password The user's password.
 * @param {boolean} [options.durable] Flush to disk at every commit (default true); false for tests.
 * @param {number} [options.timeoutMs] How long to wait for the server (default 60 s).
 * @returns {Promise<MariadbHandle>}
 * @throws {Error} When the data directory cannot be created, or the server exits or does not answer in time.
 */
export async function startMariadb({ dir, port, database, user, password, durable = true, timeoutMs = 60_000 }) {
  const mariadbd = findExecutable('mariadbd') ?? findExecutable('mysqld');
  if (!mariadbd) throw new Error('mariadbd is not installed (run ensureServerPackages() first).');
  assertIdentifier('database', database);
  assertIdentifier('user', user);
  dir = path.resolve(dir);
  await mkdir(dir, { recursive: true });
  const dataDir = path.join(dir, 'data');
  const pidFile = path.join(dir, 'mariadbd.pid');
  const errorLog = path.join(dir, 'mariadbd.err');
  const socketPath = socketPathFor(dir);
  await refuseIfRunning(pidFile, 'mariadbd', dir);

  const started = Date.now();
  if (!existsSync(path.join(dataDir, 'mysql'))) await installDataDir(dataDir);

  return retryOnPortClash(port, async (chosenPort) => {
    const args = [
      '--no-defaults',
      `--datadir=${dataDir}`,
      `--socket=${socketPath}`,
      `--port=${chosenPort}`,
      '--bind-address=127.0.0.1',
      '--skip-name-resolve',
      `--pid-file=${pidFile}`,
      `--log-error=${errorLog}`,
      '--character-set-server=utf8mb4',
      '--collation-server=utf8mb4_unicode_ci',
      '--default-time-zone=+00:00',
      '--innodb-buffer-pool-size=64M',
      '--max-connections=1000',
      '--max-allowed-packet=64M',
      ...(durable ? [] : ['--innodb-flush-log-at-trx-commit=0', '--innodb-doublewrite=0', '--sync-frm=0']),
      // mariadbd refuses to run as root unless told to.
      ...(isRoot ? ['--user=root'] : []),
    ];
    const server = spawnServer(mariadbd, args, 'mariadbd');
    const logTail = () => tailOf(errorLog, server.output);
    try {
      await waitUntilReady({ name: 'mariadbd', server, probe: () => mariadbAnswers(socketPath), timeoutMs, logTail });
      await provision({ socketPath, database, user, password });
    } catch (error) {
      await server.stop(20_000);
      throw error;
    }
    return {
      host: '127.0.0.1',
      port: chosenPort,
      user,
      password,
      database,
      socketPath,
      process: server.child,
      startedInMs: Date.now() - started,
      stop: () => server.stop(60_000),
    };
  }, () => readTail(errorLog));
}

/**
 * Creates a fresh data directory atomically: installs into a sibling folder, then renames it,
 * so an interrupted first start never leaves a half-made directory that looks usable.
 *
 * @param {string} dataDir
 */
async function installDataDir(dataDir) {
  const installer = findExecutable('mariadb-install-db') ?? findExecutable('mysql_install_db');
  if (!installer) throw new Error('mariadb-install-db is not installed (run ensureServerPackages() first).');
  const staging = `${dataDir}.installing`;
  // Its own temporary folder: two installers at once (two test lanes) in the shared /tmp once
  // failed on a temporary table the other one had removed.
  const tmpDir = `${dataDir}.tmp`;
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(tmpDir, { recursive: true });
  const args = [
    '--no-defaults',
    `--datadir=${staging}`,
    `--tmpdir=${tmpDir}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve',
    ...(isRoot ? ['--user=root'] : []),
  ];
  // Seen once in a fresh-clone run with two test lanes starting together: the installer exited 1
  // and what it printed last did not say why. Its ERROR lines are kept, and it gets another try.
  for (let attempt = 1; ; attempt++) {
    await rm(staging, { recursive: true, force: true });
    // Asynchronous so that a Redis started alongside keeps being probed meanwhile.
    const child = spawn(installer, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const [code, signal] = await new Promise((resolve) => {
      child.once('error', (error) => resolve([null, error.message]));
      child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    });
    if (code === 0) break;
    const lines = output.trim().split('\n');
    const errors = lines.filter((line) => /\berror\b/i.test(line)).slice(0, 20);
    const message = `${path.basename(installer)} failed (exit ${code ?? signal}, attempt ${attempt} of 3):\n${[...errors, '…', ...lines.slice(-10)].join('\n')}`;
    if (attempt === 3) throw new Error(message);
    process.stderr.write(`[local-services] ${message}\n[local-services] trying again\n`);
  }
  await rename(staging, dataDir);
  await rm(tmpDir, { recursive: true, force: true });
}

/**
 * Creates the database and the user on both loopback spellings, and removes root's TCP logins.
 *
 * @param {{ socketPath: string, database: string, user: string, password: string }} options
 */
async function provision({ socketPath, database, user, password }) {
  const conn = await mysql.createConnection({ socketPath, user: 'root', multipleStatements: false });
  try {
    await conn.query(`CREATE DATABASE IF NOT EXISTS ${conn.escapeId(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    for (const host of ['127.0.0.1', 'localhost']) {
      await conn.query('CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?', [user, host, password]);
      await conn.query('ALTER USER ?@? IDENTIFIED BY ?', [user, host, password]);
      await conn.query(`GRANT ALL PRIVILEGES ON ${conn.escapeId(database)}.* TO ?@?`, [user, host]);
    }
    const [roots] = /** @type {[Array<{ host: string }>, unknown]} */ (
      await conn.query("SELECT Host AS host FROM mysql.user WHERE User = 'root' AND Host <> 'localhost'")
    );
    for (const { host } of roots) await conn.query('DROP USER IF EXISTS ?@?', ['root', host]);
  } finally {
    await conn.end();
  }
}

/**
 * @param {string} what
 * @param {string} value
 */
function assertIdentifier(what, value) {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_$-]{1,64}$/.test(value)) {
    throw new Error(`${what} must be 1-64 letters, digits, _, $ or - (got ${JSON.stringify(value)})`);
  }
}

/**
 * The socket goes in `dir` unless that path is too long for a unix socket.
 *
 * @param {string} dir
 */
function socketPathFor(dir) {
  const inside = path.join(dir, 'mysqld.sock');
  if (inside.length <= MAX_SOCKET_PATH) return inside;
  const digest = createHash('sha256').update(dir).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `dataagent-mariadb-${digest}.sock`);
}

/**
 * Fails with a clear message when a server from an earlier start still owns this folder;
 * removes a pid file left by a server that died.
 *
 * @param {string} pidFile
 * @param {string} programName
 * @param {string} dir
 */
export async function refuseIfRunning(pidFile, programName, dir) {
  let pid;
  try {
    pid = Number.parseInt((await readFile(pidFile, 'utf8')).trim(), 10);
  } catch {
    return;
  }
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && commandLineOf(pid).includes(programName)) {
    throw new Error(`${programName} (pid ${pid}) from an earlier start still uses ${dir}; stop it (kill ${pid}) and retry.`);
  }
  await rm(pidFile, { force: true });
}

/** @param {number} pid */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/** @param {number} pid */
function commandLineOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * @typedef {object} SpawnedServer
 * @property {import('node:child_process').ChildProcess} child
 * @property {Promise<void>} exited Resolves when the process has exited.
 * @property {() => boolean} hasExited
 * @property {() => string} exitDescription
 * @property {string[]} output Last lines of the process's own stdout/stderr.
 * @property {(graceMs: number) => Promise<void>} stop SIGTERM, then SIGKILL after `graceMs`.
 */

/**
 * Spawns a server in the foreground, remembers the tail of its output, and makes sure it is
 * asked to shut down if this process exits without stopping it.
 *
 * @param {string} binary
 * @param {string[]} args
 * @param {string} name
 * @returns {SpawnedServer}
 */
export function spawnServer(binary, args, name) {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  /** @type {string[]} */
  const output = [];
  const remember = (/** @type {Buffer} */ chunk) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (output.length > 50) output.splice(0, output.length - 50);
  };
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);

  /** @type {string} */
  let exitDescription = '';
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      exitDescription = signal ? `signal ${signal}` : `code ${code}`;
      resolve(undefined);
    });
    child.once('error', (error) => {
      exitDescription = `spawn error: ${error.message}`;
      resolve(undefined);
    });
  });
  // SIGTERM is a clean shutdown for both servers; it still runs after our own process is gone.
  const onParentExit = () => child.kill('SIGTERM');
  process.once('exit', onParentExit);
  let done = false;
  void exited.then(() => {
    done = true;
    process.off('exit', onParentExit);
  });

  return {
    child,
    exited,
    output,
    hasExited: () => done,
    exitDescription: () => exitDescription || 'unknown',
    stop: async (graceMs) => {
      if (done) return;
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => {
        process.stderr.write(`[local-services] ${name} did not stop within ${graceMs} ms; killing it\n`);
        child.kill('SIGKILL');
      }, graceMs);
      try {
        await exited;
      } finally {
        clearTimeout(killTimer);
      }
    },
  };
}

/**
 * Probes until the server answers, the process exits, or the deadline passes. Sleeps between
 * probes back off from 10 ms to 200 ms and wake early when the process exits.
 *
 * @param {{ name: string, server: SpawnedServer, probe: () => Promise<boolean>, timeoutMs: number, logTail: () => Promise<string> }} options
 */
export async function waitUntilReady({ name, server, probe, timeoutMs, logTail }) {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    if (server.hasExited()) {
      throw new Error(`${name} exited (${server.exitDescription()}) before it was ready. Log tail:\n${await logTail()}`);
    }
    if (await probe()) return;
    if (Date.now() >= deadline) {
      throw new Error(`${name} did not answer within ${timeoutMs} ms. Log tail:\n${await logTail()}`);
    }
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, pause))), server.exited]);
    clearTimeout(timer);
  }
}

/**
 * Runs `attempt` on the requested port, or on free ports (up to three) when none was requested:
 * another process can take a port between freePort() and the server's bind.
 *
 * @template T
 * @param {number | undefined} port
 * @param {(port: number) => Promise<T>} attempt
 * @param {() => Promise<string>} readLog
 * @returns {Promise<T>}
 */
async function retryOnPortClash(port, attempt, readLog) {
  if (port) return attempt(port);
  for (let tries = 1; ; tries++) {
    try {
      return await attempt(await freePort());
    } catch (error) {
      const clash = /address already in use|Errno: 98|EADDRINUSE/i.test(`${String(error)}\n${await readLog()}`);
      if (!clash || tries >= 3) throw error;
    }
  }
}

/**
 * Sends PING over TCP and resolves true on +PONG (false while loading, refused, or timed out).
 *
 * @param {number} port
 * @returns {Promise<boolean>}
 */
export function redisAnswersPing(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const finish = (/** @type {boolean} */ ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}

/**
 * Connects as root through the socket and pings.
 *
 * @param {string} socketPath
 * @returns {Promise<boolean>}
 */
async function mariadbAnswers(socketPath) {
  if (!existsSync(socketPath)) return false;
  try {
    const conn = await mysql.createConnection({ socketPath, user: 'root', connectTimeout: 2_000 });
    try {
      await conn.ping();
      return true;
    } finally {
      await conn.end().catch(() => undefined);
    }
  } catch {
    return false;
  }
}

/**
 * @param {string} file
 * @param {string[]} output
 */
export async function tailOf(file, output) {
  const fromFile = await readTail(file);
  const own = output.slice(-10).join('\n');
  return [fromFile, own].filter(Boolean).join('\n') || '(no output)';
}

/**
 * The last ~30 lines of a log file, or '' when it does not exist.
 *
 * @param {string} file
 */
async function readTail(file) {
  let handle;
  try {
    handle = await open(file, 'r');
    const { size } = await handle.stat();
    const length = Math.min(size, 8_192);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8').split('\n').slice(-30).join('\n').trim();
  } catch {
    return '';
  } finally {
    await handle?.close();
  }
}
