import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Socket } from 'socket.io-client';
import { approvingRunner, commandOutput } from './support/red-team.js';
import { connectChat } from './support/chat-clients.js';
import { EventCollector, sendChat, waitUntil } from './support/event-waits.js';
import { OTHER_API_KEY, TEST_API_KEY, TestSystem } from './support/system.js';

/** alice of tenant acme is the attacker; bob is another tenant's user on the same worker. */
const KEYS = `${TEST_API_KEY}:acme:alice,${OTHER_API_KEY}:globex:bob`;

const PROBE_SERVER = fileURLToPath(new URL('./support/mcp-probe-server.mjs', import.meta.url)).replace('/dist/test/', '/test/');

/** What a probe found: `name=reached` or `name=blocked`, plus a few counts. */
type Findings = Record<string, string>;

/**
 * The red team's view of the sandbox: alice, a user with shell access, a skill whose script
 * runs whatever it is given, and an operator's stdio MCP server that does the same, goes after
 * the worker, the gateway, the databases and bob, through the real gateway and worker with the
 * scripted model. Each probe is also run with a control that must succeed, so a probe that is
 * "blocked" only because its tool is missing would fail the test.
 */
describe('sandbox: what a hostile user of a shared, multi-tenant deployment reaches from a shell command, a skill script and a stdio MCP server', () => {
  let system: TestSystem;
  let dir: string;
  let alice: Socket;
  let aliceEvents: EventCollector;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'da-red-team-'));
    // A skill whose one script runs its argument: what a skill script could do at worst.
    const skill = join(dir, 'skills', 'probe');
    mkdirSync(join(skill, 'scripts'), { recursive: true });
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: probe\ndescription: Runs a probe command.\n---\nRun `run.sh` with the command.\n');
    writeFileSync(join(skill, 'scripts', 'run.sh'), '#!/bin/sh\nexec /bin/sh -c "$1"\n');
    chmodSync(join(skill, 'scripts', 'run.sh'), 0o755);
    const mcpConfig = join(dir, 'mcp.json');
    writeFileSync(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          probe: { command: process.execPath, args: [PROBE_SERVER] },
          // The operator grants this one a network: a namespace of its own, still without the host's loopback.
          netprobe: { command: process.execPath, args: [PROBE_SERVER], sandbox: { network: true } },
        },
      }),
    );
    system = await TestSystem.start({
      env: {
        DATAAGENT_MULTI_TENANT: 'true',
        DATAAGENT_API_KEYS: KEYS,
        DATAAGENT_SANDBOX: 'bwrap',
        DATAAGENT_SHELL_ENABLED: 'true',
        DATAAGENT_SKILLS_DIR: join(dir, 'skills'),
        DATAAGENT_MCP_CONFIG: mcpConfig,
        DATAAGENT_TOOL_TIMEOUT_MS: '8000',
        DATAAGENT_HITL_TIMEOUT: '60',
      },
    });
    writeFileSync(join(system.dataDir, 'planted-secret.txt'), 'the operator only');
    alice = await connectChat(system.url, TEST_API_KEY);
    aliceEvents = new EventCollector(alice);
  });

  afterAll(async () => {
    alice?.disconnect();
    await system?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (message: string) => approvingRunner(alice, aliceEvents, 60_000)(message);
  const outputOf = commandOutput;

  /** The probe script: each line `name=reached|blocked`; controls first. */
  function probeScript(): string {
    const worker = system.workers[0].proc.pid!;
    const gateway = system.gateway.proc.pid!;
    const redisPort = new URL(system.env.DATAAGENT_REDIS_URL ?? process.env.DATAAGENT_REDIS_URL!).port;
    const mysqlPort = system.env.DATAAGENT_MYSQL_PORT ?? process.env.DATAAGENT_MYSQL_PORT;
    const gatewayPort = new URL(system.url).port;
    const mysqlData = dirname(process.env.DATAAGENT_TEST_MYSQL_ROOT_SOCKET!);
    const bobWorkspace = join(system.dataDir, 'workspaces', 'globex', 'bob');
    const tcp = (port: string | number) => `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}'`;
    return [
      'p() { n=$1; shift; if sh -c "$*" >/dev/null 2>&1; then echo "$n=reached"; else echo "$n=blocked"; fi; }',
      // Controls: the tools the probes use are there, and the workspace is the caller's.
      'p control_workspace "echo x > probe.txt && cat probe.txt"',
      'p control_bash "bash -c true"',
      'p control_proc "cat /proc/self/status"',
      `p worker_environ "cat /proc/${worker}/environ"`,
      `p gateway_environ "cat /proc/${gateway}/environ"`,
      'p parent_environ "cat /proc/1/environ | grep -a DATAAGENT"',
      // Folders above the workspace exist as empty mount points: what counts is reading what is in them.
      `p data_dir "cat ${join(system.dataDir, 'planted-secret.txt')}"`,
      `p other_workspace "cat ${join(bobWorkspace, 'files', 'secret.txt')}"`,
      `p mysql_data "ls ${mysqlData} | grep -q ."`,
      `p redis_tcp "${tcp(redisPort!)}"`,
      `p mysql_tcp "${tcp(mysqlPort!)}"`,
      `p gateway_tcp "${tcp(gatewayPort)}"`,
      'echo "processes=$(ls /proc | grep -c "^[0-9]")"',
      'echo "uid=$(id -u)"',
    ].join('\n');
  }

  function findingsOf(stdout: string): Findings {
    return Object.fromEntries(stdout.split('\n').filter((l) => l.includes('=')).map((l) => l.split('=', 2) as [string, string]));
  }

  const expectConfined = (findings: Findings) => {
    expect(findings).toMatchObject({
      control_workspace: 'reached',
      control_bash: 'reached',
      control_proc: 'reached',
      worker_environ: 'blocked',
      gateway_environ: 'blocked',
      parent_environ: 'blocked',
      data_dir: 'blocked',
      other_workspace: 'blocked',
      mysql_data: 'blocked',
      redis_tcp: 'blocked',
      mysql_tcp: 'blocked',
      gateway_tcp: 'blocked',
    });
    // The sandbox's own init, the shell and the probe: no worker, gateway or database process.
    expect(Number(findings.processes)).toBeLessThan(10);
    expect(findings.uid).not.toBe('0');
  };

  it('a shell command sees no other process, no secret, no other workspace and no loopback service', async () => {
    // bob has a workspace with a file in it.
    mkdirSync(join(system.dataDir, 'workspaces', 'globex', 'bob', 'files'), { recursive: true });
    writeFileSync(join(system.dataDir, 'workspaces', 'globex', 'bob', 'files', 'secret.txt'), 'bob only');
    const [result] = await run(`[[tool:shell ${JSON.stringify({ command: probeScript() })}]]`);
    const findings = findingsOf(outputOf(result).stdout);
    console.log(`red team, shell: ${JSON.stringify(findings)}`);
    expectConfined(findings);
  });

  it('a skill script is confined the same way', async () => {
    const [result] = await run(`[[tool:run_skill ${JSON.stringify({ name: 'probe', script: 'run.sh', args: [probeScript()] })}]]`);
    const findings = findingsOf(outputOf(result).stdout);
    console.log(`red team, skill script: ${JSON.stringify(findings)}`);
    expectConfined(findings);
  });

  it("an operator's stdio MCP server runs per user, confined the same way", async () => {
    const [result] = await run(`[[tool:probe__run ${JSON.stringify({ command: probeScript() })}]]`);
    const findings = findingsOf(outputOf(result).stdout);
    console.log(`red team, stdio MCP server: ${JSON.stringify(findings)}`);
    expectConfined(findings);
  });

  it("an operator's server granted a network gets one of its own, still without the host's loopback services", async () => {
    const [result] = await run(`[[tool:netprobe__run ${JSON.stringify({ command: `p() { n=$1; shift; if sh -c "$*" >/dev/null 2>&1; then echo "$n=reached"; else echo "$n=blocked"; fi; }\np control_network "grep -q tap0 /proc/net/dev"\n${probeScript()}` })}]]`);
    const findings = findingsOf(outputOf(result).stdout);
    console.log(`red team, networked stdio MCP server: ${JSON.stringify(findings)}`);
    expect(findings.control_network).toBe('reached');
    expectConfined(findings);
  });

  it('a hard link a command plants in the workspace is refused by the file tools', async () => {
    const [planted] = await run(`[[tool:shell ${JSON.stringify({ command: 'echo mine > files/a.txt && ln files/a.txt files/b.txt && echo linked' })}]]`);
    expect(outputOf(planted).stdout).toContain('linked');
    const [read] = await run(`[[tool:read_file ${JSON.stringify({ path: 'files/b.txt' })}]]`);
    expect(read.status).toBe('error');
    expect(JSON.stringify(read.result)).toContain('has 2 hard links');
  });

  /** Host processes whose command line contains `marker`. */
  function hostProcessesWith(marker: string): number[] {
    const pids: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
      } catch {
        // gone
      }
    }
    return pids;
  }

  it('nothing a command starts outlives it, a setsid child included', async () => {
    const marker = `31.${Math.floor(Math.random() * 1e6)}`;
    const [result] = await run(`[[tool:shell ${JSON.stringify({ command: `setsid sleep ${marker} & sleep 0.2; echo started` })}]]`);
    expect(outputOf(result).stdout).toContain('started');
    expect(hostProcessesWith(`sleep\0${marker}`)).toEqual([]);
  });

  it('a fork bomb and a 2 GB allocation are stopped by the limits while bob chats as usual', async () => {
    const bob = await connectChat(system.url, OTHER_API_KEY);
    const bobEvents = new EventCollector(bob);
    const chatMs = async () => {
      const started = performance.now();
      const ack = await sendChat(bob, { message: 'hello' });
      await bobEvents.done(ack.run_id, 30_000);
      return performance.now() - started;
    };
    try {
      const idle = [await chatMs(), await chatMs(), await chatMs()];
      const marker = `bomb-${randomUUID().slice(0, 8)}`;
      let bombOver = false;
      const bomb = run(`[[tool:shell ${JSON.stringify({ command: `: ${marker}; f() { f | f & }; f; sleep 15` })}]]`).finally(() => (bombOver = true));
      await waitUntil(() => hostProcessesWith(marker).length > 0, 30_000);
      const during = [await chatMs(), await chatMs(), await chatMs()];
      // Bob was answered while the bomb was still going (its sandbox holds it for 15 s).
      const answeredDuringBomb = !bombOver;
      const [bombResult] = await bomb;
      console.log(`red team, fork bomb: bob's chat idle ${idle.map((ms) => ms.toFixed(0)).join('/')} ms, during the bomb ${during.map((ms) => ms.toFixed(0)).join('/')} ms; bomb ended: ${bombResult.status}`);
      expect(answeredDuringBomb).toBe(true);
      expect(hostProcessesWith(marker)).toEqual([]);

      const [alloc] = await run(`[[tool:shell ${JSON.stringify({ command: 'node -e "const b = Buffer.alloc(2 * 1024 ** 3, 1); console.log(b.length)"' })}]]`);
      const output = outputOf(alloc);
      console.log(`red team, 2 GB allocation: exit ${output.exit_code}, ${output.stderr.split('\n').find((l) => /Error/.test(l)) ?? output.stderr.slice(0, 200)}`);
      expect(output.exit_code).not.toBe(0);
      expect(output.stdout).not.toContain(String(2 * 1024 ** 3));

      // Memory is bounded for the sandbox as a whole, not only per process: four processes of
      // 300 MB each (each under the per-process limit) do not all get theirs.
      const bounds = system.workers[0].output.map((line) => /"bounds":"([^"]+)"/.exec(line)?.[1]).find(Boolean);
      console.log(`red team, sandbox bounds: ${bounds}`);
      if (bounds?.startsWith('cgroup')) {
        const hog = 'node -e "const b = Buffer.alloc(300 * 1024 ** 2, 1); setTimeout(() => console.log(b.length), 1500)"';
        const [many] = await run(`[[tool:shell ${JSON.stringify({ command: `for i in 1 2 3 4; do ${hog} & done; wait` })}]]`);
        const allocated = outputOf(many).stdout.split('\n').filter((l) => l.trim() === String(300 * 1024 ** 2)).length;
        console.log(`red team, 4 × 300 MB in one sandbox: ${allocated} got theirs; ${JSON.stringify(many.result).match(/the sandbox stopped it[^"]*/)?.[0]}`);
        expect(allocated).toBeLessThan(4);
        // The result says which limit stopped it, for the person and the model.
        expect(JSON.stringify(many.result)).toContain('the sandbox stopped it at its memory limit (512 MiB, DATAAGENT_SANDBOX_MEMORY)');
        expect(JSON.stringify(bombResult.result)).toContain('its process limit (64, DATAAGENT_SANDBOX_PROCESSES)');
      }

      // The limits belonged to those commands: the next one runs as usual.
      const [after] = await run(`[[tool:shell ${JSON.stringify({ command: 'echo fine' })}]]`);
      expect(outputOf(after).stdout.trim()).toBe('fine');
    } finally {
      bob.disconnect();
    }
  });
});
