import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Socket } from 'socket.io-client';
import type { ToolResultEventDict } from '#core/events/execution-event.js';
import { SYSTEM_DIRS } from '#core/sandbox/sandbox.js';
import { approvingRunner, commandOutput } from './support/red-team.js';
import { api, connectChat } from './support/chat-clients.js';
import { EventCollector } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';
import type { WorkerProcess } from './support/app-processes.js';

/** alice of tenant acme is the attacker; bob of globex shares the worker. */
const KEYS = `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:globex:bob`;

const PROBE_SERVER = fileURLToPath(new URL('./support/mcp-probe-server.mjs', import.meta.url)).replace('/dist/test/', '/test/');
const REPO = dirname(dirname(dirname(PROBE_SERVER)));

/** The descriptor the worker inherits a writable pipe at, past a gap (as a supervisor's or CI runner's pipe reaches it). */
const INHERITED_FD = 40;
const QUOTA = 64 * 1024 ** 2;

/**
 * The red team's second round, through the real gateway and worker: what a user's stdio server
 * arguments mount into its sandbox, which descriptors a sandbox starts with, and whether shell
 * writes count against the workspace quota.
 */
describe('sandbox: mounts, inherited descriptors and the workspace quota against a hostile user', () => {
  let system: TestSystem;
  let worker: WorkerProcess;
  let dir: string;
  let alice: Socket;
  let aliceEvents: EventCollector;
  /** What reached the read end of the pipe the worker inherited. */
  let piped = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-confinement-'));
    // A skill whose one script runs its argument: what a skill script could do at worst.
    const skill = join(dir, 'skills', 'probe');
    mkdirSync(join(skill, 'scripts'), { recursive: true });
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: probe\ndescription: Runs a probe command.\n---\nRun `run.sh` with the command.\n');
    writeFileSync(join(skill, 'scripts', 'run.sh'), '#!/bin/sh\nexec /bin/sh -c "$1"\n');
    chmodSync(join(skill, 'scripts', 'run.sh'), 0o755);
    const mcpConfig = join(dir, 'mcp.json');
    writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { probe: { command: process.execPath, args: [PROBE_SERVER] } } }));
    system = await TestSystem.start({
      workers: 0,
      env: {
        DATAAGENT_MULTI_TENANT: 'true',
        DATAAGENT_API_KEYS: KEYS,
        DATAAGENT_SANDBOX: 'bwrap',
        DATAAGENT_SHELL_ENABLED: 'true',
        DATAAGENT_MCP_CONFIG: mcpConfig,
        DATAAGENT_SKILLS_DIR: join(dir, 'skills'),
        // Users may run the probe server, with any arguments: a program, not a launcher.
        DATAAGENT_MCP_STDIO_ALLOW: JSON.stringify([PROBE_SERVER]),
        DATAAGENT_WORKSPACE_QUOTA: String(QUOTA),
        DATAAGENT_TOOL_TIMEOUT_MS: '20000',
        DATAAGENT_HITL_TIMEOUT: '60',
      },
    });
    worker = await system.addWorker({}, { inheritedPipeFd: INHERITED_FD });
    worker.inheritedPipe!.on('data', (chunk: Buffer) => (piped += chunk.toString('utf8')));
    worker.inheritedPipe!.on('error', () => undefined);
    writeFileSync(join(system.dataDir, 'planted-secret.txt'), 'the operator only');
    alice = await connectChat(system.url, TEST_API_KEY);
    aliceEvents = new EventCollector(alice);
  });

  afterAll(async () => {
    alice?.disconnect();
    await system?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = (message: string) => approvingRunner(alice, aliceEvents, 90_000)(message);
  const outputOf = commandOutput;

  const aliceWorkspace = () => join(system.dataDir, 'workspaces', 'acme', 'alice');

  it("a user's stdio server whose arguments name /, the data folder and /proc gets none of them mounted", async () => {
    const mysqlSocket = process.env.DATAAGENT_TEST_MYSQL_ROOT_SOCKET!;
    const args = ['stdio', '/', system.dataDir, join(system.dataDir, 'planted-secret.txt'), '/proc', '/sys/fs/cgroup', mysqlSocket, dirname(mysqlSocket)];
    const registered = await api(system.url, 'POST', '/users/alice/mcp-servers', { apiKey: TEST_API_KEY, body: { name: 'mine', command: PROBE_SERVER, args } });
    expect(registered.status).toBe(201);

    const probe = [
      'p() { n=$1; shift; if sh -c "$*" >/dev/null 2>&1; then echo "$n=reached"; else echo "$n=blocked"; fi; }',
      'p control_workspace "echo x > probe.txt && cat probe.txt"',
      `p data_dir "cat ${join(system.dataDir, 'planted-secret.txt')}"`,
      `p mysql_socket "test -S ${mysqlSocket}"`,
      `p mysql_data "ls ${dirname(mysqlSocket)} | grep -q ."`,
      'p host_sys "ls /sys | grep -q ."',
      'echo ---',
      'cat /proc/self/mountinfo',
    ].join('\n');
    const [result] = await run(`[[tool:mine__run ${JSON.stringify({ command: probe })}]]`);
    const [findings, mountinfo] = outputOf(result).stdout.split('---\n');
    console.log(`red team, a user's stdio server's arguments: ${findings!.trim().replace(/\n/g, ' ')}`);

    // Each mount is one the operator's setup makes: the system's runtime, the few files of /etc,
    // the sandbox's own /, /proc, /dev and /tmp, alice's workspace, and the probe server's own
    // folder and dependencies (its install folders, from its real path). Nothing its arguments named.
    const system_ = SYSTEM_DIRS.filter((d) => {
      try {
        return lstatSync(d).isDirectory();
      } catch {
        return false;
      }
    });
    const allowed = (point: string, type: string) =>
      (point === '/' && type === 'tmpfs') ||
      (point === '/tmp' && type === 'tmpfs') ||
      point === '/proc' || point.startsWith('/proc/') ||
      point === '/dev' || point.startsWith('/dev/') ||
      point.startsWith('/etc/') ||
      system_.some((d) => point === d || point.startsWith(`${d}/`)) ||
      point === aliceWorkspace() ||
      point === dirname(PROBE_SERVER) ||
      point === join(REPO, 'node_modules');
    const mounts = mountinfo!.trim().split('\n').map((line) => {
      const fields = line.split(' ');
      return { point: fields[4]!.replace(/\\040/g, ' '), type: fields[fields.indexOf('-') + 1]! };
    });
    const unexpected = mounts.filter((m) => !allowed(m.point, m.type));
    console.log(`red team, a user's stdio server's mounts: ${mounts.length}, unexpected: ${JSON.stringify(unexpected.slice(0, 10))}`);
    expect(unexpected).toEqual([]);
    expect(mounts.map((m) => m.point)).toEqual(expect.arrayContaining([aliceWorkspace(), dirname(PROBE_SERVER)]));
    expect(findings).toContain('control_workspace=reached');
    for (const name of ['data_dir', 'mysql_socket', 'mysql_data', 'host_sys']) expect(findings).toContain(`${name}=blocked`);
  });

  it('a sandbox starts with descriptors 0, 1 and 2 only: the pipe the worker inherited is not among them', async () => {
    // `; echo end` keeps the shell from becoming ls (whose own listing would show its descriptor of the folder).
    const command = `ls /proc/$$/fd; echo alice-was-here > /proc/$$/fd/${INHERITED_FD}; echo end`;
    const [shell] = await run(`[[tool:shell ${JSON.stringify({ command })}]]`);
    const [server] = await run(`[[tool:probe__run ${JSON.stringify({ command })}]]`);
    const descriptors = (result: ToolResultEventDict | undefined) => outputOf(result).stdout.split('\n').filter((line) => /^\d+$/.test(line));
    console.log(`red team, descriptors: shell ${descriptors(shell).join(',')}, stdio server ${descriptors(server).join(',')}`);
    expect(descriptors(shell)).toEqual(['0', '1', '2']);
    expect(descriptors(server)).toEqual(['0', '1', '2']);
    expect(piped).toBe('');
  });

  it("a shell command's writes count against the workspace quota, and the next write (file tool, shell, skill script) is refused", async () => {
    const usage = () => {
      let bytes = 0;
      const walk = (d: string) => {
        for (const entry of readdirSync(d, { withFileTypes: true })) {
          if (entry.isDirectory()) walk(join(d, entry.name));
          else if (entry.isFile()) bytes += lstatSync(join(d, entry.name)).size;
        }
      };
      walk(aliceWorkspace());
      return bytes;
    };
    // 100 MiB into a 64 MiB quota, in one command.
    const [big] = await run(`[[tool:shell ${JSON.stringify({ command: 'head -c 104857600 /dev/zero > files/big.bin; echo wrote' })}]]`);
    const after = usage();
    console.log(`red team, 100 MiB into a ${QUOTA / 1024 ** 2} MiB quota: ${(after / 1024 ** 2).toFixed(1)} MiB landed; stderr ${JSON.stringify(outputOf(big).stderr.trim())}`);
    // The command's file size limit was the room the quota had left: it ends within the quota.
    expect(after).toBeLessThanOrEqual(QUOTA);
    expect(after).toBeGreaterThan(QUOTA - 1024 ** 2);

    const [file] = await run(`[[tool:write_file ${JSON.stringify({ path: 'files/more.txt', content: 'more' })}]]`);
    expect(file!.status).toBe('error');
    expect(JSON.stringify(file!.result)).toContain('workspace_quota_exceeded');

    const [shell] = await run(`[[tool:shell ${JSON.stringify({ command: 'echo more > files/more.txt && echo wrote' })}]]`);
    expect(outputOf(shell).stdout).not.toContain('wrote');
    expect(JSON.stringify(shell!.result)).toContain('the workspace quota had room for 0 more bytes');
    const [script] = await run(`[[tool:run_skill ${JSON.stringify({ name: 'probe', script: 'run.sh', args: ['echo more > files/skill.txt && echo wrote'] })}]]`);
    expect(outputOf(script).stdout).not.toContain('wrote');
    expect(usage()).toBe(after);
  });
});
