/**
 * Jest global setup: one throw-away Redis and MariaDB for the whole run, bound to loopback.
 *
 * Runs in jest's parent process before any worker is spawned, so the variables set here reach
 * every test file, with or without --runInBand. Handles are kept on globalThis for the teardown.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { aptInstall, ensurePromtool, ensureSandboxPackages, ensureServerPackages, findExecutable, startMariadb, startRedis } from '../../scripts/local-services.mjs';

export const HANDLES_KEY = '__dataagentLocalServices';

/**
 * Installs what the e2e tests use from Debian's packages when absent, and names the browser and
 * promtool in the environment. The lanes of scripts/test-e2e-lanes.mjs call it once before they
 * start, so two lanes never run apt-get at once.
 */
export async function ensureTestPackages() {
  await ensureServerPackages();
  // The worker sandboxes users' processes in bubblewrap; the red-team tests need it.
  ensureSandboxPackages();
  process.env.DATAAGENT_TEST_CHROMIUM = ensureChromium();
  ensureTmux();
  ensureStrace();
  // Prometheus's linter, which test/metrics-promtool.test.ts runs on the scraped metrics.
  process.env.DATAAGENT_TEST_PROMTOOL = ensurePromtool();
}

export default async function globalSetup() {
  await ensureTestPackages();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dataagent-test-'));
  const started = Date.now();
  const [redis, mariadb] = await Promise.allSettled([
    startRedis({ dir: path.join(dir, 'redis'), persist: false }),
    startMariadb({
      dir: path.join(dir, 'mariadb'),
      database: 'dataagent_test',
      user: 'dataagent_test',
      password: randomBytes(12).toString('hex'),
      durable: false,
    }),
  ]);
  if (redis.status === 'rejected' || mariadb.status === 'rejected') {
    await Promise.allSettled([redis, mariadb].map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    await rm(dir, { recursive: true, force: true });
    throw redis.status === 'rejected' ? redis.reason : /** @type {PromiseRejectedResult} */ (mariadb).reason;
  }
  globalThis[HANDLES_KEY] = { dir, redis: redis.value, mariadb: mariadb.value };

  const db = mariadb.value;
  Object.assign(process.env, {
    DATAAGENT_REDIS_URL: redis.value.url,
    DATAAGENT_MYSQL_HOST: db.host,
    DATAAGENT_MYSQL_PORT: String(db.port),
    DATAAGENT_MYSQL_USER: db.user,
    DATAAGENT_MYSQL_PASSWORD: db.password,
    DATAAGENT_MYSQL_DATABASE: db.database,
    DATAAGENT_TEST_MYSQL_ROOT_SOCKET: db.socketPath,
  });
  process.stderr.write(
    `\n[test harness] redis ${redis.value.url} (${redis.value.startedInMs} ms), ` +
      `mariadb 127.0.0.1:${db.port} (${db.startedInMs} ms), ready in ${Date.now() - started} ms\n`,
  );
}

/** Debian's Chromium, which the browser tests drive (test/support/browser.ts); installed when absent. */
function ensureChromium() {
  const log = (line) => process.stderr.write(`${line}\n`);
  if (!findExecutable('chromium')) aptInstall(['chromium'], ['chromium'], log);
  const executable = findExecutable('chromium');
  if (!executable) throw new Error('apt-get finished but chromium is still not on PATH.');
  return executable;
}

/** strace, which the sandbox's loopback test uses to hold bubblewrap at one system call; installed when absent. */
function ensureStrace() {
  const log = (line) => process.stderr.write(`${line}\n`);
  if (!findExecutable('strace')) aptInstall(['strace'], ['strace'], log);
  if (!findExecutable('strace')) throw new Error('apt-get finished but strace is still not on PATH.');
}

/** tmux, the real terminal the interactive CLI tests drive (test/support/terminal.ts); installed when absent. */
function ensureTmux() {
  const log = (line) => process.stderr.write(`${line}\n`);
  if (!findExecutable('tmux')) aptInstall(['tmux'], ['tmux'], log);
  if (!findExecutable('tmux')) throw new Error('apt-get finished but tmux is still not on PATH.');
}
