/**
 * `npm start`: the whole of DataAgent on one machine, from a fresh clone.
 *
 * Installs dependencies when missing, builds, starts a local Redis and MariaDB from the
 * machine's packages unless DATAAGENT_REDIS_URL (or DATAAGENT_REDIS_CLUSTER_NODES) / DATAAGENT_MYSQL_HOST point elsewhere (data in
 * `.data/`, so history survives a restart), then runs one gateway and one worker with their
 * logs prefixed. Flags after `npm start --` go to both (`--port 9000`, `--log-level debug`), but
 * a secret, as a flag or a variable, goes only to the app that reads it (SECRETS_OF).
 *
 * Two processes: this one (in the terminal's process group) installs and builds, then starts
 * a supervisor in its own process group. A terminal Ctrl-C reaches every process of the
 * foreground group, and redis-server shuts down on SIGINT: outside that group, the supervisor
 * can stop things in order instead (gateway and worker drain first, then MariaDB and Redis).
 *
 * Stopping: SIGINT, SIGTERM or SIGHUP here (or this process dying) makes the supervisor send
 * SIGTERM to the gateway and the worker, and SIGKILL to whichever is still there after
 * DATAAGENT_STOP_GRACE_MS (10 s): a frozen event loop never runs its SIGTERM handler.
 * DATAAGENT_SKIP_BUILD=true uses node_modules and dist/ as they are (images, tests).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const self = fileURLToPath(import.meta.url);
const SUPERVISOR_MARK = 'DATAAGENT_START_SUPERVISOR';
const DATA_DIR = path.join(root, '.data');
/** How long a gateway or worker may take to drain after SIGTERM before it is killed (DATAAGENT_STOP_GRACE_MS). */
const APP_STOP_GRACE_MS = 10_000;
const TAIL_LINES = 20;
/**
 * Secrets only one of the two apps reads, by the app that reads them: the other is handed
 * neither the variable nor its flag, so a process holds only the secrets it uses. The gateway
 * resolves API keys; only workers call models and web search. Both read the rest (the MySQL
 * password, DATAAGENT_SECRET_KEY, DATAAGENT_METRICS_TOKEN).
 */
const SECRETS_OF = {
  gateway: ['DATAAGENT_API_KEYS'],
  worker: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'TAVILY_API_KEY'],
};

const say = (line) => process.stdout.write(`[dataagent] ${line}\n`);
const complain = (line) => process.stderr.write(`[dataagent] ${line}\n`);

// ---------------------------------------------------------------------------------------------
// Foreground: install, build, hand over to the supervisor and relay signals to it.

function launch() {
  if (/^(true|1|yes|on)$/i.test(process.env.DATAAGENT_SKIP_BUILD ?? '')) {
    say('using node_modules and dist/ as they are (DATAAGENT_SKIP_BUILD)');
  } else {
    run(process.execPath, [path.join(root, 'scripts/ensure-install.mjs')], 'installing dependencies failed');
    say('building (npm run build)...');
    run('npm', ['run', 'build', '--silent'], 'the build failed (see the compiler output above)');
  }

  const supervisor = spawn(process.execPath, [self, ...process.argv.slice(2)], {
    cwd: root,
    detached: true,
    // The IPC channel closes when this process dies, however it dies: the supervisor then stops everything.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [SUPERVISOR_MARK]: '1' },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => supervisor.kill('SIGTERM'));
  }
  // `kill <npm pid>` reaches npm's `sh -c`, which dies without passing the signal on, and leaves
  // this process orphaned. Node has no parent-death event, so look at the parent pid now and then.
  const parent = process.ppid;
  const orphanCheck = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(orphanCheck);
    supervisor.kill('SIGTERM');
  }, 1_000).unref();
  supervisor.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

/** Runs a setup command in the foreground; exits with a message when it fails. */
function run(command, args, failure) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    complain(`${failure}${result.error ? `: ${result.error.message}` : ''}`);
    process.exit(result.status || 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Supervisor: services, gateway, worker, ordered shutdown.

async function supervise() {
  // Imported here: they need node_modules and dist/, which the foreground has just made.
  const { ConfigError, flagName, loadConfig, parseFlags } = await import('#core/config/env.js');
  const { GATEWAY_CONFIGS } = await import('../dist/apps/gateway/src/infra/gateway-config.js');
  const { WORKER_CONFIGS } = await import('../dist/apps/worker/src/infra/worker-config.js');
  const { describeChatModel, missingModelSettings } = await import('#llm/create-chat-model.js');
  const services = await import('./local-services.mjs');

  const argv = process.argv.slice(2);
  const flags = parseFlags(argv);
  const env = { ...process.env };
  delete env[SUPERVISOR_MARK];
  /** A setting as the apps will see it: flag first, then environment; '' counts as unset. */
  const given = (variable) => {
    const value = flags.get(flagName(variable)) ?? env[variable];
    return value === undefined || value === '' ? undefined : value;
  };

  // A terminal closed or a pipe whose reader left must not crash the supervisor mid-shutdown:
  // what it has to stop matters more than the lines nobody can read any more.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

  /** @type {{ name: string, stop: () => Promise<void> }[]} */
  const started = [];
  /** @type {Map<string, AppChild>} */
  const apps = new Map();
  let stopping = false;
  /** Settles once the services being started are up (or failed), so a shutdown can stop them. */
  let servicesStarting = Promise.resolve();

  const graceMs = stopGraceMs(env.DATAAGENT_STOP_GRACE_MS);
  const graceShown = `${(graceMs ?? APP_STOP_GRACE_MS) / 1000} s`;

  /**
   * Stops the apps (drain, SIGKILL after the grace), then the services, then exits. A second
   * signal meanwhile changes nothing: the SIGKILL is already scheduled, and one Ctrl-C can
   * arrive twice (directly and forwarded by npm), which must not cut the drain short.
   */
  const shutdown = async (code) => {
    if (stopping) {
      if (apps.size > 0) say(`still stopping ${[...apps.keys()].join(' and ')} (killed at most ${graceShown} after the first signal)`);
      return;
    }
    stopping = true;
    if (apps.size > 0) say(`stopping ${[...apps.keys()].join(' and ')} (killing after ${graceShown})...`);
    await Promise.all([...apps.values()].map((app) => app.stop(graceMs ?? APP_STOP_GRACE_MS)));
    await servicesStarting;
    await stopServices();
    say(code === 0 ? 'stopped' : `stopped (exit code ${code})`);
    process.exit(code);
  };
  const stopServices = async () => {
    if (started.length > 0) say(`stopping ${started.map((s) => s.name).join(' and ')}...`);
    await Promise.all(
      started.splice(0).map((s) => s.stop().catch((err) => complain(`stopping ${s.name} failed: ${err.message}`))),
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void shutdown(0));
  process.on('disconnect', () => void shutdown(0));

  // Quick-start defaults: loopback only, port 8000, and no keys needed unless some are configured.
  if (!given('DATAAGENT_HOST')) env.DATAAGENT_HOST = '127.0.0.1';
  if (!given('DATAAGENT_PORT')) env.DATAAGENT_PORT = '8000';
  // The worker's metrics port, like the gateway, on loopback only unless asked otherwise.
  if (!given('DATAAGENT_METRICS_HOST')) env.DATAAGENT_METRICS_HOST = '127.0.0.1';
  const authDefaulted = !given('DATAAGENT_API_KEYS') && !given('DATAAGENT_AUTH_DISABLED');
  if (authDefaulted) env.DATAAGENT_AUTH_DISABLED = 'true';
  // Users' files (the file and shell tools) stay with the rest of the local data.
  if (!env.DATAAGENT_WORKSPACE_ROOT) {
    env.DATAAGENT_WORKSPACE_ROOT = path.join(DATA_DIR, 'workspaces', '{tenant_id}', '{user_id}');
    await moveLegacyWorkspaces(path.join(DATA_DIR, 'workspaces'));
  }
  if (!env.DATAAGENT_STORAGE_ROOT) env.DATAAGENT_STORAGE_ROOT = DATA_DIR;
  // The worker hands what it still runs back to the queue before it would be killed; it continues at the next start.
  if (!given('DATAAGENT_DRAIN_SECONDS')) env.DATAAGENT_DRAIN_SECONDS = String(Math.max(0, ((graceMs ?? APP_STOP_GRACE_MS) - 2_000) / 1000));
  if (!env.DATAAGENT_SKILLS_DIR) env.DATAAGENT_SKILLS_DIR = path.join(root, 'skills');
  // Users' MCP server secrets are encrypted with it: the gateway and the worker must share one key, kept across restarts.
  if (!given('DATAAGENT_SECRET_KEY')) {
    const { key, created } = await localSecretKey(path.join(DATA_DIR, 'secret.key'));
    if (!/^[0-9a-f]{64}$/i.test(key)) {
      complain('.data/secret.key is not 64 hex characters: restore it, or delete it to make a new key (users then enter their MCP servers\' secrets again).');
      process.exit(2);
    }
    if (created) say('generated the key users\' MCP secrets are encrypted with: .data/secret.key (keep it with the database)');
    env.DATAAGENT_SECRET_KEY = key;
  }

  // Validate now, so a typo fails in a second rather than after MariaDB has started.
  const problems = [];
  const load = (ctor) => {
    try {
      return loadConfig(ctor, env, argv);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems.filter((p) => !problems.includes(p)));
      return undefined;
    }
  };
  // Every config class the apps load (server, redis, mysql, llm, worker, tools, ...), each once.
  const loaded = new Map([...new Set([...Object.values(GATEWAY_CONFIGS), ...Object.values(WORKER_CONFIGS)])].map((ctor) => [ctor, load(ctor)]));
  const server = loaded.get(GATEWAY_CONFIGS.server);
  const llm = loaded.get(WORKER_CONFIGS.llm);
  // The worker would refuse them too, but only after the services had been started for nothing.
  if (llm) problems.push(...missingModelSettings(llm));
  if (graceMs === null) problems.push(`DATAAGENT_STOP_GRACE_MS: must be a whole number of milliseconds (got ${JSON.stringify(env.DATAAGENT_STOP_GRACE_MS)})`);
  if (problems.length > 0) {
    complain(new ConfigError(problems).message);
    process.exit(2);
  }
  if (loaded.get(GATEWAY_CONFIGS.store).sessionStore === 'memory') {
    complain('DATAAGENT_SESSION_STORE=memory keeps history inside one process, but npm start runs the gateway and the worker as two processes: use mysql (the default).');
    process.exit(2);
  }
  if (server.port !== 0 && (await portInUse(server.host, server.port))) {
    complain(`port ${server.port} on ${server.host} is already in use (is DataAgent already running?). Stop what holds it, or choose another port: DATAAGENT_PORT=8001 npm start, or npm start -- --port 8001`);
    process.exit(1);
  }

  try {
    // A cluster's seed nodes point elsewhere as much as a URL does.
    const needRedis = !given('DATAAGENT_REDIS_URL') && !given('DATAAGENT_REDIS_CLUSTER_NODES');
    const needMysql = !given('DATAAGENT_MYSQL_HOST');
    if (needRedis || needMysql) await services.ensureServerPackages();
    // The worker runs users' commands in bubblewrap where it can; without it, it says so and goes on unconfined.
    if (given('DATAAGENT_SANDBOX') !== 'none') {
      try {
        services.ensureSandboxPackages();
      } catch (err) {
        complain(`the sandbox could not be installed (${err.message}); the worker will say what it runs without it`);
      }
    }
    const redis = needRedis ? startService('redis', () => services.startRedis({ dir: path.join(DATA_DIR, 'redis'), persist: true })) : undefined;
    const mariadb = needMysql
      ? startService('mariadb', async () =>
          services.startMariadb({
            dir: path.join(DATA_DIR, 'mariadb'),
            database: 'dataagent',
            user: 'dataagent',
            password: await mysqlPassword(path.join(DATA_DIR, 'mysql-password')),
            durable: true,
          }),
        )
      : undefined;
    servicesStarting = Promise.allSettled([redis, mariadb]);
    const [redisHandle, mariadbHandle] = await Promise.all([redis, mariadb]);
    if (redisHandle) {
      env.DATAAGENT_REDIS_URL = redisHandle.url;
      say(`redis on 127.0.0.1:${redisHandle.port} (data in .data/redis)`);
    }
    if (mariadbHandle) {
      Object.assign(env, {
        DATAAGENT_MYSQL_HOST: mariadbHandle.host,
        DATAAGENT_MYSQL_PORT: String(mariadbHandle.port),
        DATAAGENT_MYSQL_USER: mariadbHandle.user,
        DATAAGENT_MYSQL_PASSWORD: mariadbHandle.password,
        DATAAGENT_MYSQL_DATABASE: mariadbHandle.database,
      });
      say(`mariadb on 127.0.0.1:${mariadbHandle.port}, database dataagent (data in .data/mariadb, password in .data/mysql-password)`);
    }
  } catch (err) {
    if (stopping) return;
    stopping = true;
    const message = err instanceof Error ? err.message : String(err);
    complain(`could not start the local services: ${message}`);
    if (message.includes('from an earlier start')) complain('is npm start already running in this folder? Stop it with Ctrl-C first.');
    await servicesStarting;
    await stopServices();
    process.exit(1);
  }
  if (stopping) return;

  /** Starts a service and registers it for shutdown, also when a Ctrl-C came in meanwhile. */
  async function startService(name, start) {
    const handle = await start();
    started.push({ name, stop: handle.stop });
    return handle;
  }

  const onExit = (app, code, signal) => {
    apps.delete(app.name);
    if (stopping) return;
    complain(`${app.name} exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}); its last lines:`);
    for (const line of app.tail) process.stderr.write(`  ${line}\n`);
    void shutdown(code || 1);
  };
  const forGateway = withoutSettings(env, argv, SECRETS_OF.worker, flagName);
  const forWorker = withoutSettings(env, argv, SECRETS_OF.gateway, flagName);
  const gateway = startApp('gateway', 'dist/gateway.js', forGateway.argv, forGateway.env, (json) => json.msg === 'gateway listening', onExit);
  const worker = startApp('worker', 'dist/worker.js', forWorker.argv, forWorker.env, (json) => json.msg === 'worker ready', onExit);
  apps.set('gateway', gateway);
  apps.set('worker', worker);

  const [listening] = await Promise.all([gateway.ready, worker.ready]);
  if (stopping) return;
  const url = String(listening.url);
  const keyHeader = authDefaulted || server.authDisabled ? '' : ` -H 'x-api-key: <one of DATAAGENT_API_KEYS>'`;
  say(`ready at ${url}: REST under /api/v1, Socket.IO namespace /chat, WebSocket /ws/chat/{session_id}`);
  say(`LLM: ${describeChatModel(llm)}`);
  if (authDefaulted) {
    say('WARNING: authentication is off for this local quick start (DATAAGENT_AUTH_DISABLED=true); to require keys, set DATAAGENT_API_KEYS=key or key:tenant:user[:role] (comma-separated) and send X-API-Key.');
  }
  say(`Open ${url}/ in your browser to chat (the web UI${authDefaulted || server.authDisabled ? '' : ', with one of DATAAGENT_API_KEYS'}), or try the API:`);
  process.stdout.write(`  curl -s -X POST ${url}/api/v1/chat -H 'content-type: application/json'${keyHeader} -d '{"message":"hello"}'\n`);
  say('Ctrl-C stops everything.');
}

/**
 * @typedef {object} AppChild
 * @property {string} name
 * @property {Promise<Record<string, unknown>>} ready Resolves with the JSON line that says it is ready.
 * @property {string[]} tail Its last log lines, for the report when it dies.
 * @property {(graceMs: number) => Promise<void>} stop SIGTERM, SIGKILL after `graceMs`; resolves once it has exited.
 */

/**
 * Spawns a gateway or worker, prints its log lines with a `[name]` prefix, and reports
 * readiness from the first JSON line `isReady` accepts.
 *
 * @returns {AppChild}
 */
function startApp(name, script, argv, env, isReady, onExit) {
  const child = spawn(process.execPath, [path.join(root, script), ...argv], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.once('exit', () => child.kill('SIGKILL'));
  /** @type {AppChild} */
  const app = { name, tail: [], ready: undefined, stop: undefined };
  let markReady;
  app.ready = new Promise((resolve) => (markReady = resolve));

  for (const [stream, out] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
    createInterface({ input: stream }).on('line', (line) => {
      const json = parseJson(line);
      const shown = json ? compact(json) : line;
      app.tail.push(shown);
      if (app.tail.length > TAIL_LINES) app.tail.shift();
      if (!(json && isBootChatter(json))) out.write(`[${name}] ${shown}\n`);
      if (json && isReady(json)) markReady(json);
    });
  }
  child.once('exit', (code, signal) => onExit(app, code, signal));
  app.stop = async (graceMs) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // The kill is scheduled first and done before anything is printed, so nothing can stand
    // between the grace running out and the SIGKILL.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      complain(`${name} did not stop within ${graceMs / 1000} s; killed it`);
    }, graceMs);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(timer);
  };
  return app;
}

/**
 * The environment and flags without the settings `variables`: their variables, and their flags
 * in both forms parseFlags reads (`--name=value`, `--name value`).
 * @param {(variable: string) => string} flagOf the flag of a variable (env.js's flagName)
 * @returns {{ env: Record<string, string | undefined>, argv: string[] }}
 */
function withoutSettings(env, argv, variables, flagOf) {
  const kept = { ...env };
  for (const variable of variables) delete kept[variable];
  const flags = new Set(variables.map(flagOf));
  const args = [];
  for (let i = 0; i < argv.length; i++) {
    const eq = argv[i].indexOf('=');
    if (!flags.has(eq > 0 ? argv[i].slice(0, eq) : argv[i])) args.push(argv[i]);
    else if (eq < 0 && i + 1 < argv.length && !argv[i + 1].startsWith('--')) i++;
  }
  return { env: kept, argv: args };
}

/**
 * DATAAGENT_STOP_GRACE_MS as milliseconds.
 * @returns {number | undefined | null} undefined when unset, null when not a whole number.
 */
function stopGraceMs(raw) {
  if (raw === undefined || raw.trim() === '') return undefined;
  return /^\d+$/.test(raw.trim()) ? Number(raw) : null;
}

function parseJson(line) {
  if (!line.startsWith('{')) return null;
  try {
    const value = JSON.parse(line);
    return value && typeof value === 'object' && typeof value.msg === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** Nest's info lines about wiring modules and routes: one per route, at every start. */
const BOOT_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'WebSocketsController', 'NestApplication']);
const isBootChatter = (json) => json.level === 30 && BOOT_CONTEXTS.has(json.context);

const LEVELS = { 10: 'TRACE', 20: 'DEBUG', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line carries; the rest is worth showing. */
const NOISE = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'service', 'worker_id', 'req', 'res', 'err', 'responseTime', 'request_id', 'reqId']);

/** A pino line as `LEVEL message key=value ...`: level only when not info, nested objects left out. */
function compact(json) {
  const parts = [];
  if (LEVELS[json.level]) parts.push(LEVELS[json.level]);
  parts.push(json.msg);
  if (json.req && json.res) parts.push(`${json.req.method} ${json.req.url} → ${json.res.statusCode} in ${json.responseTime} ms`);
  for (const [key, value] of Object.entries(json)) {
    if (NOISE.has(key) || value === null || typeof value === 'object') continue;
    parts.push(`${key}=${value}`);
  }
  if (json.err) parts.push(`error: ${json.err.message ?? JSON.stringify(json.err)}`);
  return parts.join(' ');
}

/** True when something already listens on host:port. */
function portInUse(host, port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (err) => resolve(err.code === 'EADDRINUSE'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/** The local MariaDB user's password: generated on the first start, then read from `file` (mode 600). */
async function mysqlPassword(file) {
  let password = '';
  try {
    password = (await readFile(file, 'utf8')).trim();
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  if (!password) {
    password = randomBytes(24).toString('base64url');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${password}\n`, { mode: 0o600 });
  }
  await chmod(file, 0o600);
  return password;
}

/**
 * The key users' MCP secrets are encrypted with when DATAAGENT_SECRET_KEY is unset: 32 random
 * bytes in hex, generated on the first start, then read from `file` (mode 600). Losing it makes
 * the stored secrets unreadable (users enter them again).
 * @returns {Promise<{ key: string, created: boolean }>}
 */
async function localSecretKey(file) {
  try {
    const key = (await readFile(file, 'utf8')).trim();
    await chmod(file, 0o600);
    return { key, created: false };
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32).toString('hex');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return { key, created: true };
}

/**
 * Workspaces were `.data/workspaces/{user_id}` before the tenant was part of the path; the local
 * quick start's users are in the tenant `default`, so their folders move to
 * `.data/workspaces/default/{user_id}` once (nothing is lost on upgrade).
 * @param {string} root
 */
async function moveLegacyWorkspaces(root) {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  // A legacy workspace holds the standard folders directly; a tenant folder holds user folders.
  const legacy = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name === 'default') continue;
    const inside = await readdir(path.join(root, entry.name)).catch(() => []);
    if (inside.includes('files') || inside.includes('outputs') || inside.includes('uploads')) legacy.push(entry.name);
  }
  if (legacy.length === 0) return;
  await mkdir(path.join(root, 'default'), { recursive: true });
  for (const name of legacy) {
    const target = path.join(root, 'default', name);
    if (!existsSync(target)) await rename(path.join(root, name), target);
  }
  say(`moved ${legacy.length} workspace folder(s) into .data/workspaces/default/ (workspaces are now per tenant)`);
}

// Last, so that every constant above is initialised before either half runs.
if (process.env[SUPERVISOR_MARK] === '1') await supervise();
else launch();
