import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'socket.io-client';
import type { EventDict, ToolResultEventDict } from '#core/events/execution-event.js';
import { connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat } from './support/event-waits.js';
import type { ProcessUser } from './support/app-processes.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/** alice of acme attacks; bob of globex keeps a private file in his workspace. */
const KEYS = `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:globex:bob`;
/**
 * How long alice's command swaps folders for symlinks (DATAAGENT_TEST_RACE_SECONDS for a longer
 * attack), and how many runs of file tools go at once meanwhile.
 */
const SWAP_SECONDS = Number(process.env.DATAAGENT_TEST_RACE_SECONDS ?? 6);
const RUNS_AT_ONCE = 200;
/** A user the worker runs as in the second case: an unprivileged uid with no other rights here. */
const UNPRIVILEGED: ProcessUser = { uid: 4242, gid: 4242 };

/**
 * The red team's symlink-swap race on the file tools, which run in the worker, as root here:
 * alice's approved shell command swaps real folders of her workspace with symlinks to folders
 * outside it (`renameat2(RENAME_EXCHANGE)` in a loop), while her other chats call `read_file`,
 * `write_file`, `edit_file`, `ls` and `grep` on paths through those folders. Whatever the
 * timing, nothing outside her workspace may be read, listed, created or changed. The worker
 * runs as root, then as an unprivileged user that owns the operator's files (what a non-root
 * worker can still be steered to).
 */
describe.each([
  ['root', undefined],
  ['an unprivileged user', UNPRIVILEGED],
])('file tools against a symlink-swap race from the user\'s own sandbox, the worker running as %s', (_as, workerUser?: ProcessUser) => {
  let system: TestSystem;
  let alice: Socket;
  let events: EventCollector;
  const secret = `operator-secret-${randomBytes(8).toString('hex')}`;
  const bobSecret = `bob-private-${randomBytes(8).toString('hex')}`;
  const marker = `outside-only-${randomBytes(6).toString('hex')}.marker`;
  const canary = 'root-only original';
  let outsideSecret: string;
  let outsideWrite: string;

  beforeAll(async () => {
    system = await TestSystem.start({
      env: {
        DATAAGENT_MULTI_TENANT: 'true',
        DATAAGENT_API_KEYS: KEYS,
        DATAAGENT_SANDBOX: 'bwrap',
        DATAAGENT_SHELL_ENABLED: 'true',
        // alice approves all her own calls; the race does not depend on it.
        DATAAGENT_HITL_TOOLS: 'none',
        DATAAGENT_MAX_TOOL_CALLS: '10',
        // All of alice's runs at once, on one worker: the tenant's run limit would hold them back.
        DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '0',
        DATAAGENT_WORKER_CONCURRENCY: String(RUNS_AT_ONCE + 10),
        // alice sends each round's chats on one socket at once.
        DATAAGENT_CLIENT_MESSAGES_PER_SECOND: String(RUNS_AT_ONCE * 4),
        DATAAGENT_TOOL_TIMEOUT_MS: String((SWAP_SECONDS + 30) * 1000),
      },
      ...(workerUser ? { workerUser } : {}),
    });
    // The operator's data beside the workspaces: a secret, a folder nobody may write, and bob's workspace.
    outsideSecret = join(system.dataDir, 'operator-secrets');
    outsideWrite = join(system.dataDir, 'operator-only');
    mkdirSync(outsideSecret, { mode: 0o700 });
    mkdirSync(outsideWrite, { mode: 0o700 });
    writeFileSync(join(outsideSecret, 'secret.key'), `${secret}\n`, { mode: 0o600 });
    writeFileSync(join(outsideSecret, marker), 'x', { mode: 0o600 });
    writeFileSync(join(outsideWrite, 'canary.txt'), canary, { mode: 0o600 });
    const bobFiles = join(system.dataDir, 'workspaces', 'globex', 'bob', 'files');
    mkdirSync(bobFiles, { recursive: true });
    writeFileSync(join(bobFiles, 'private.txt'), `${bobSecret}\n`, { mode: 0o600 });
    chmodSync(join(system.dataDir, 'workspaces', 'globex', 'bob'), 0o700);
    if (workerUser) {
      const own = (p: string) => chownSync(p, workerUser.uid, workerUser.gid);
      for (const dir of [outsideSecret, outsideWrite]) [dir, ...readdirSync(dir).map((f) => join(dir, f))].forEach(own);
      for (const p of ['workspaces', 'workspaces/globex', 'workspaces/globex/bob', 'workspaces/globex/bob/files', 'workspaces/globex/bob/files/private.txt']) own(join(system.dataDir, p));
    }
    alice = await connectChat(system.url, TEST_API_KEY);
    events = new EventCollector(alice);
  }, 120_000);

  afterAll(async () => {
    alice?.disconnect();
    await system?.stop();
  });

  async function chat(message: string, timeoutMs = 60_000): Promise<ToolResultEventDict[]> {
    const ack = await sendChat(alice, { message });
    if (!ack.ok) throw new Error(`chat refused: ${JSON.stringify(ack)}`);
    await events.done(ack.run_id, timeoutMs);
    return events.ofRun(ack.run_id).filter((e: EventDict): e is ToolResultEventDict => e.event_type === 'tool_result');
  }

  const call = (name: string, args: Record<string, unknown>) => `[[tool:${name} ${JSON.stringify(args)}]]`;

  it(`leaks nothing and writes nothing outside while alice swaps folders for ${SWAP_SECONDS} s`, async () => {
    // Inside: real folders whose files have the names the calls use. Outside: the symlinks' targets.
    const setup = [
      'cd files && mkdir -p x y z',
      'echo decoy > x/secret.key && echo decoy > y/canary.txt && echo decoy > z/private.txt',
      `ln -sfn ${outsideSecret} xl && ln -sfn ${outsideWrite} yl && ln -sfn ${join(system.dataDir, 'workspaces', 'globex', 'bob', 'files')} zl`,
      'echo ready',
    ].join(' && ');
    const [prepared] = await chat(call('shell', { command: setup }));
    expect(JSON.stringify(prepared!.result)).toContain('ready');

    // perl is in every Debian (perl-base is essential); renameat2 is syscall 316 on x86-64, 276 on arm64.
    const swapper = [
      'use Config; my $n = $Config{archname} =~ /aarch64/ ? 276 : 316;',
      `my $end = time + ${SWAP_SECONDS}; my $swaps = 0;`,
      'while (time < $end) { for my $p (["x", "xl"], ["y", "yl"], ["z", "zl"]) { $swaps++ if syscall($n, -100, $p->[0], -100, $p->[1], 2) == 0 } }',
      'print "swaps $swaps\\n";',
    ].join(' ');
    const swapping = chat(call('shell', { command: `cd files && perl -e '${swapper}'` }), (SWAP_SECONDS + 60) * 1000);
    let swapped = false;
    void swapping.finally(() => (swapped = true));

    const attack = [
      call('read_file', { path: 'files/x/secret.key' }),
      call('read_file', { path: 'files/z/private.txt' }),
      call('write_file', { path: 'files/y/PWNED.txt', content: 'pwned' }),
      call('write_file', { path: 'files/y/canary.txt', content: 'overwritten' }),
      call('edit_file', { path: 'files/y/canary.txt', old_string: canary, new_string: 'PWNED' }),
      call('ls', { path: 'files/x' }),
      call('ls', { path: 'files/z' }),
      call('grep', { pattern: 'operator-secret|bob-private', path: 'files/x' }),
      call('grep', { pattern: 'operator-secret|bob-private', path: 'files/z' }),
      call('write_file', { path: 'files/z/private.txt', content: 'overwritten' }),
    ].join(' ');
    const results: ToolResultEventDict[] = [];
    let rounds = 0;
    while (!swapped) {
      rounds++;
      const round = await Promise.all(Array.from({ length: RUNS_AT_ONCE }, () => chat(attack, 120_000)));
      results.push(...round.flat());
    }
    const [swapResult] = await swapping;
    const swapOutput = JSON.stringify(swapResult!.result);
    const swaps = Number(/swaps (\d+)/.exec(swapOutput)?.[1] ?? 0);
    if (!swaps) throw new Error(`the swap loop did not run: ${swapOutput.slice(0, 500)}`);

    const shown = results.map((r) => JSON.stringify(r.result));
    const refused = shown.filter((text) => /outside the workspace|symbolic links/.test(text)).length;
    console.log(`file-tools race: ${swaps} swaps in ${SWAP_SECONDS} s; ${results.length} file tool calls in ${rounds} rounds of ${RUNS_AT_ONCE} runs; ${refused} refused as leading outside`);
    // The race was on: folders were swapped many times, and calls met the swapped state.
    expect(swaps).toBeGreaterThan(1000);
    expect(results.length).toBeGreaterThanOrEqual(200);
    expect(refused).toBeGreaterThan(0);

    // The harm: nothing outside read, listed, created or changed.
    for (const text of shown) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(bobSecret);
      expect(text).not.toContain(marker);
    }
    expect(readdirSync(outsideWrite)).toEqual(['canary.txt']);
    expect(readFileSync(join(outsideWrite, 'canary.txt'), 'utf8')).toBe(canary);
    expect(readFileSync(join(outsideSecret, 'secret.key'), 'utf8')).toBe(`${secret}\n`);
    expect(readFileSync(join(system.dataDir, 'workspaces', 'globex', 'bob', 'files', 'private.txt'), 'utf8')).toBe(`${bobSecret}\n`);
    expect(readdirSync(join(system.dataDir, 'workspaces', 'globex', 'bob', 'files'))).toEqual(['private.txt']);
  }, (SWAP_SECONDS + 240) * 1000);
});
