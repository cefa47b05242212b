import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chatToDone } from './support/event-waits.js';
import { apiKeyOf, ScriptedAnthropicServer } from './support/scripted-anthropic-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const ANTHROPIC_KEY = 'sk-ant-e2e-DO-NOT-SHOW-0123456789';

describe('the Anthropic provider through the real worker', () => {
  let anthropic: ScriptedAnthropicServer;
  let system: TestSystem;

  beforeAll(async () => {
    anthropic = await ScriptedAnthropicServer.start();
    system = await TestSystem.start({
      env: { DATAAGENT_MODEL: 'anthropic:claude-test', ANTHROPIC_BASE_URL: anthropic.baseUrl, ANTHROPIC_API_KEY: ANTHROPIC_KEY },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await anthropic?.stop();
  });

  it('runs a tool the model asks for with tool_use, sends the result back as tool_result, and streams the answer', async () => {
    const openaiRequests = system.llm.requests.length;
    const run = await chatToDone(system.url, TEST_API_KEY, 'list my files [[tool:ls {"path":"."}]]');

    const call = run.find((e) => e.event_type === 'tool_call');
    expect(call).toMatchObject({ tool_name: 'ls', tool_args: { path: '.' } });
    expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ tool_call_id: call!.tool_call_id, status: 'success' });
    const answer = run.filter((e) => e.event_type === 'text').map((e) => e.content).join('');
    expect(answer).toMatch(/^Tool ls returned: /);
    expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });

    // Two Messages API calls, the second with the tool_use answered by its tool_result; nothing went to OpenAI.
    expect(anthropic.refused).toEqual([]);
    const [first, second] = anthropic.requests.slice(-2);
    expect(apiKeyOf(first!.headers)).toBe(ANTHROPIC_KEY);
    expect(first!.body).toMatchObject({ model: 'claude-test', stream: true, system: expect.stringContaining('DataAgent') });
    expect(first!.body.tools!.map((t) => t.name)).toContain('ls');
    expect(second!.body.messages!.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.tool_call_id, content: expect.any(String) }] });
    expect(system.llm.requests.length).toBe(openaiRequests);
  });

  it('shows each assistant’s model in GET /api/v1/agents, without keys', async () => {
    const res = await fetch(`${system.url}/api/v1/agents`, { headers: { 'x-api-key': TEST_API_KEY } });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(JSON.parse(text)).toEqual({ agents: [expect.objectContaining({ assistant_id: 'default', model: 'anthropic:claude-test' })] });
    expect(text).not.toContain(ANTHROPIC_KEY);
  });
});

describe('a worker whose assistant needs a key that is missing', () => {
  it('refuses to start, naming the variable, before any chat', () => {
    const run = spawnSync(process.execPath, [`${root}dist/worker.js`], {
      env: { ...process.env, DATAAGENT_ASSISTANT_MODELS: 'default=anthropic:claude-test', ANTHROPIC_API_KEY: '', DATAAGENT_LLM_PROVIDER: 'auto' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/DATAAGENT_ASSISTANT_MODELS: the assistant "default" uses anthropic:claude-test, which needs ANTHROPIC_API_KEY/);
    expect(run.stdout).not.toMatch(/worker ready/);
  });

  it('stops npm start before it starts anything', () => {
    const run = spawnSync(process.execPath, [`${root}scripts/start.mjs`], {
      cwd: root,
      env: { ...process.env, DATAAGENT_SKIP_BUILD: 'true', DATAAGENT_MODEL: 'claude-test', ANTHROPIC_API_KEY: '', DATAAGENT_LLM_PROVIDER: 'auto', DATAAGENT_SECRET_KEY: 'ab'.repeat(32) },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stdout + run.stderr).toMatch(/DATAAGENT_MODEL claude-test needs ANTHROPIC_API_KEY/);
    expect(run.stdout + run.stderr).not.toMatch(/ready at/);
  });
});
