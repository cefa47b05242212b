import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventDict } from '#core/events/execution-event.js';
import { EVERYTHING } from './support/mcp-servers.js';
import { lastUserText, ScriptedLlmServer } from './support/scripted-llm-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const root = fileURLToPath(new URL('../', import.meta.url)).replace(/dist\/$/, '');
const BIN = join(root, 'apps/cli/bin/dataagent.mjs');

const TODOS = '[[tool:write_todos {"todos":[{"content":"load the table","status":"completed"},{"content":"plot it","status":"pending"}]}]]';
const write = (path: string) => `[[tool:write_file {"path":"${path}","content":"hello"}]]`;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the `dataagent` bin as a user would, in its own process, with stdin and stdout pipes (no TTY);
 * no model setting leaks in from outside. `onStdout` sees the output as it comes (to send Ctrl-C).
 */
function cli(args: string[], env: NodeJS.ProcessEnv, onStdout?: (text: string, proc: ReturnType<typeof spawn>) => void, stdin = ''): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(OPENAI_|ANTHROPIC_|DATAAGENT_)/.test(name)));
  const proc = spawn(process.execPath, [BIN, ...args], { env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stdin.end(stdin);
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    onStdout?.(stdout, proc);
  });
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => proc.on('close', (code) => resolve({ code, stdout, stderr })));
}

function jsonLines(stdout: string): EventDict[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as EventDict);
}

describe('dataagent CLI, local mode (the agent in its own process)', () => {
  let llm: ScriptedLlmServer;
  let home: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    llm = await ScriptedLlmServer.start();
    home = mkdtempSync(join(tmpdir(), 'da-cli-'));
    env = { OPENAI_BASE_URL: llm.baseUrl, OPENAI_API_KEY: 'sk-test-not-a-real-key', DATAAGENT_MODEL: 'scripted', DATAAGENT_CLI_HOME: home };
  });
  afterAll(async () => {
    await llm?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('-p prints the answer as plain text and exits 0', async () => {
    const run = await cli(['-p', 'hello'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Hello from the scripted LLM server.\n');
    expect(run.stdout).not.toContain('\u001b[');
  });

  it('-p - reads the question from stdin', async () => {
    const run = await cli(['-p', '-'], env, undefined, 'piped [[chunks:2]]\n');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('tok0 tok1 \n');
  });

  it('--json prints well-formed event lines ending with done', async () => {
    const run = await cli(['-p', 'count [[chunks:3]]', '--json'], env);
    expect(run.code).toBe(0);
    const events = jsonLines(run.stdout);
    expect(events.map((e) => e.event_type)).toEqual(['text', 'text', 'text', 'usage', 'text', 'done']);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(events.map((e) => e.run_id)).size).toBe(1);
    expect(events.at(-1)).toMatchObject({ cancelled: false });
  });

  it('runs a tool call and shows it, with the todo list as a checklist', async () => {
    const run = await cli(['-p', `plan ${TODOS}`], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('write_todos');
    expect(run.stdout).toContain('[x] load the table');
    expect(run.stdout).toContain('[ ] plot it');
    expect(run.stdout).toContain('Tool write_todos returned:');
  });

  it('a failing model exits 1 with the error on stderr', async () => {
    const run = await cli(['-p', 'fail [[error:500]]'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error: .*500/);
  });

  it('rejects a call that needs approval without --approve-all (exit 3), runs it with', async () => {
    const file = join(home, 'workspaces', 'local', 'files', 'cli.txt');
    const rejected = await cli(['-p', `save ${write('files/cli.txt')}`], env);
    expect(rejected.code).toBe(3);
    expect(rejected.stderr).toContain('approval requested: write_file');
    expect(rejected.stderr).toContain('--approve-all');
    expect(existsSync(file)).toBe(false);

    const approved = await cli(['-p', `save ${write('files/cli.txt')}`, '--approve-all'], env);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/create files\/cli\.txt \+1 -0/);
    expect(readFileSync(file, 'utf8')).toBe('hello');
  });

  it('--resume continues a local session: the model sees the earlier turn', async () => {
    const first = await cli(['-p', 'my name is Ada', '--json'], env);
    expect(first.code).toBe(0);
    const sessionId = jsonLines(first.stdout)[0]!.session_id;
    const seen = llm.nextRequest();
    const second = await cli(['-p', 'what is my name?', '--resume', sessionId, '--json'], env);
    expect(second.code).toBe(0);
    const request = await seen;
    expect(lastUserText(request)).toBe('what is my name?');
    const earlier = (request.body.messages ?? []).map((m) => [m.role, m.content]);
    expect(earlier).toEqual(expect.arrayContaining([['user', 'my name is Ada'], ['assistant', 'Hello from the scripted LLM server.']]));
    expect(new Set(jsonLines(second.stdout).map((e) => e.session_id))).toEqual(new Set([sessionId]));

    const unknown = await cli(['-p', 'hi', '--resume', 'no-such-session'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no local session no-such-session');
  });

  it('Ctrl-C cancels the running answer and exits 130', async () => {
    let sent = false;
    const run = await cli(['-p', 'long [[chunks:500]] [[slow:20]]'], env, (stdout, proc) => {
      if (!sent && stdout.includes('tok1 ')) {
        sent = true;
        proc.kill('SIGINT');
      }
    });
    expect(run.code).toBe(130);
    expect(run.stderr).toContain('run cancelled');
    expect(run.stdout).not.toContain('tok499');
  });

  it('without a model configured, the offline model answers and stderr says how to configure one', async () => {
    const run = await cli(['-p', 'hello offline'], { DATAAGENT_CLI_HOME: home });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("I'm DataAgent's offline model");
    expect(run.stderr).toContain('offline model (set OPENAI_API_KEY or OPENAI_BASE_URL');
  });

  it('bad usage exits 2', async () => {
    const [badFlag, interactive] = await Promise.all([cli(['--no-such-flag'], env), cli([], env)]);
    expect(badFlag.code).toBe(2);
    expect(interactive.code).toBe(2);
    expect(interactive.stderr).toContain('the interactive UI needs a terminal');
  });

  describe('MCP servers in local mode', () => {
    const ECHO = '[[tool:everything__echo {"message":"hi"}]] go';
    const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
    const broken = { command: 'dataagent-test-no-such-command' };

    it('--mcp-config with a servers list: the working server\'s tool runs, the broken one is warned about', async () => {
      const file = join(home, 'mcp-list.json');
      writeFileSync(file, JSON.stringify({ servers: [{ name: 'everything', ...everything }, { name: 'broken', ...broken }] }));
      const run = await cli(['-p', ECHO, '--mcp-config', file], env);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Echo: hi');
      expect(run.stderr).toMatch(/MCP server broken not connected: .+/);
      expect(run.stderr).not.toMatch(/MCP server everything not connected/);
    });

    it('~/.deepagents/<assistant>/mcp.json with an mcpServers map is read without the flag', async () => {
      const fakeHome = join(home, 'user-home');
      mkdirSync(join(fakeHome, '.deepagents', 'default'), { recursive: true });
      writeFileSync(join(fakeHome, '.deepagents', 'default', 'mcp.json'), JSON.stringify({ mcpServers: { everything, broken } }));
      const run = await cli(['-p', ECHO], { ...env, HOME: fakeHome });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Echo: hi');
      expect(run.stderr).toMatch(/MCP server broken not connected: .+/);
    });
  });
});

describe('dataagent CLI, remote mode (a gateway and a worker)', () => {
  let system: TestSystem;
  let args: string[];

  beforeAll(async () => {
    system = await TestSystem.start();
    args = ['--server', system.url, '--api-key', TEST_API_KEY];
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('-p prints the answer and exits 0', async () => {
    const run = await cli([...args, '-p', 'hello'], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Hello from the scripted LLM server.\n');
  });

  it('--json prints the run events as lines ending with done, a tool call among them', async () => {
    const run = await cli([...args, '-p', `plan ${TODOS}`, '--json'], {});
    expect(run.code).toBe(0);
    const events = jsonLines(run.stdout);
    const types = events.map((e) => e.event_type);
    expect(types.at(-1)).toBe('done');
    expect(types).toEqual(expect.arrayContaining(['tool_call', 'todo_update', 'tool_result']));
    expect(events.find((e) => e.event_type === 'tool_call')).toMatchObject({ tool_name: 'write_todos' });
    expect(new Set(events.map((e) => e.run_id)).size).toBe(1);
  });

  it('rejects a call that needs approval without --approve-all (exit 3), runs it with', async () => {
    const file = join(system.dataDir, 'workspaces', 'acme', 'alice', 'files', 'remote.txt');
    const rejected = await cli([...args, '-p', `save ${write('files/remote.txt')}`], {});
    expect(rejected.code).toBe(3);
    expect(rejected.stderr).toContain('approval requested: write_file');
    expect(rejected.stderr).toContain('--approve-all');
    expect(existsSync(file)).toBe(false);

    const approved = await cli([...args, '-p', `save ${write('files/remote.txt')}`, '--yes'], {});
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('Tool write_file returned:');
    expect(readFileSync(file, 'utf8')).toBe('hello');
  });

  it('a bad key fails with exit 1 and says why', async () => {
    const run = await cli(['--server', system.url, '--api-key', 'wrong-key', '-p', 'hello'], {});
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('cannot connect to');
  });
});
