import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventDict } from '#core/events/execution-event.js';
import { connectChat } from './support/chat-clients.js';
import { chatToDone, EventCollector, sendChat } from './support/event-waits.js';
import { rawDirective } from './support/scripted-llm-server.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

/** A loopback HTTP server that records requests; `handler` decides the answer. */
async function recordingServer(handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void) {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, hits, port: (server.address() as AddressInfo).port };
}

const close = async (s: Server) => {
  s.closeAllConnections();
  await new Promise((r) => s.close(r));
};

describe('tool calls through the real worker', () => {
  let system: TestSystem;
  let workspaces: string;
  let silent: Awaited<ReturnType<typeof recordingServer>>;
  let target: Awaited<ReturnType<typeof recordingServer>>;
  let redirector: Awaited<ReturnType<typeof recordingServer>>;

  beforeAll(async () => {
    workspaces = mkdtempSync(join(tmpdir(), 'da-tools-'));
    silent = await recordingServer(() => {}); // never answers
    target = await recordingServer((_req, res) => res.end('secret'));
    redirector = await recordingServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${target.port}/internal` }).end());
    system = await TestSystem.start({
      workers: 1,
      env: {
        DATAAGENT_WORKSPACE_ROOT: join(workspaces, '{user_id}'),
        DATAAGENT_TOOL_TIMEOUT_MS: '500',
        DATAAGENT_OUTBOUND_ALLOWLIST: `127.0.0.1:${silent.port},127.0.0.1:${redirector.port}`,
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await Promise.all([silent, target, redirector].map((s) => s && close(s.server)));
    rmSync(workspaces, { recursive: true, force: true });
  });

  const chat = (message: string) => chatToDone(system.url, TEST_API_KEY, message);
  const steps = (run: EventDict[]) =>
    run.filter((e) => !['run_queued', 'run_started', 'usage', 'done'].includes(e.event_type) && !(e.event_type === 'text' && e.content === '')).map((e) => (e.event_type === 'text' ? `text:${e.content}` : e.event_type));

  it('runs a tag streamed in three chunks: text at once, the tag after buffering, the rest after the result', async () => {
    const run = await chat(rawDirective(['思考: 我需要搜索...<tool_action name="', 'vector-search"><query value="test"', '" /></tool_action>接下来...']));
    expect(steps(run).slice(0, 4)).toEqual(['text:思考: 我需要搜索...', 'tool_call', 'tool_result', 'text:接下来...']);
    expect(run.find((e) => e.event_type === 'tool_call')).toMatchObject({ tool_name: 'vector-search', tool_args: { query: 'test' } });
    expect(run.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'error', result: { success: false, error: 'Tool not found: vector-search' } });
    // The error went back to the model as a tool message, and the loop went on.
    const second = system.llm.requests.at(-1)!.body.messages!;
    expect(second.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('Tool not found: vector-search') });
    expect(steps(run).slice(4).join('')).toMatch(/^text:Tool vector-search returned/);
  });

  it('runs several tags in order, each with its own result', async () => {
    const run = await chat(
      rawDirective([
        'First <tool_action name="write_todos"><todos value=\'[{"content":"a","status":"pending"}]\' /></tool_action>',
        ' then <tool_action name="ls"><path value="." /></tool_action> end',
      ]),
    );
    expect(steps(run).slice(0, 8)).toEqual(['text:First ', 'tool_call', 'todo_update', 'tool_result', 'text: then ', 'tool_call', 'tool_result', 'text: end']);
    const results = run.filter((e) => e.event_type === 'tool_result');
    expect(results.map((r) => r.status)).toEqual(['success', 'success']);
    expect(JSON.stringify(results[1].result)).toContain('files');
  });

  it('never executes an unclosed tag', async () => {
    const run = await chat(rawDirective(['about to <tool_action name="ls">', '<path value="." />']));
    expect(run.some((e) => e.event_type === 'tool_call')).toBe(false);
    expect(steps(run).join('')).toContain('<tool_action name="ls"><path value="." />');
  });

  it('prefers native tool calls and shows tags as text then', async () => {
    const tag = '<tool_action name="ls"><path value="." /></tool_action>';
    const run = await chat(`${rawDirective([`say ${tag}`])} [[tool:write_todos {"todos":[{"content":"n","status":"pending"}]}]]`);
    expect(run.filter((e) => e.event_type === 'tool_call').map((e) => e.tool_name)).toEqual(['write_todos']);
    expect(steps(run)).toContain(`text:${tag}`);
  });

  it('understands the JSON tool_call form', async () => {
    const run = await chat(rawDirective(['{"response": "Listing.", "tool_call": ', '{"name": "ls", "arguments": {"path": "."}}}']));
    expect(steps(run).slice(0, 3)).toEqual(['text:Listing.', 'tool_call', 'tool_result']);
  });

  it('gives a hanging tool a timeout result and still finishes with done', async () => {
    const run = await chat(`[[tool:http_request {"url":"http://127.0.0.1:${silent.port}/hang"}]]`);
    const result = run.find((e) => e.event_type === 'tool_result')!;
    expect(['timeout', 'error']).toContain(result.status);
    expect(JSON.stringify(result.result)).toMatch(/time/i);
    expect(run.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    expect(silent.hits).toContain('/hang');
  });

  it('refuses a loopback target and a redirect to one, and the target sees nothing', async () => {
    const direct = await chat(`[[tool:http_request {"url":"http://127.0.0.1:${target.port}/direct"}]]`);
    expect(direct.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'error' });
    expect(JSON.stringify(direct.find((e) => e.event_type === 'tool_result')!.result)).toMatch(/refused|not allowed|forbidden/i);
    const redirected = await chat(`[[tool:fetch_url {"url":"http://127.0.0.1:${redirector.port}/go"}]]`);
    expect(redirected.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'error' });
    expect(redirector.hits).toContain('/go');
    expect(target.hits).toEqual([]);
  });
});

describe('tool calls with tag parsing off, tool prompt on', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_TOOL_ACTION_PARSING: 'false', DATAAGENT_TOOL_PROMPT: 'true' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('shows tags as plain text', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const tag = '<tool_action name="write_todos"><todos value="[]" /></tool_action>';
      const ack = await sendChat(socket, { message: rawDirective([tag]) });
      await events.done(ack.run_id);
      const run = events.ofRun(ack.run_id);
      expect(run.some((e) => e.event_type === 'tool_call')).toBe(false);
      expect(run.filter((e) => e.event_type === 'text').map((e) => e.content).join('')).toBe(tag);
      // DATAAGENT_TOOL_PROMPT put the generated tool descriptions, with a tag example, in the system prompt.
      const system0 = String(system.llm.requests.at(-1)!.body.messages![0].content);
      expect(system0).toContain('<tool_action name="');
      expect(system0).toMatch(/### write_todos/);
    } finally {
      socket.disconnect();
    }
  });
});

describe('JSON tool calls off, tags on', () => {
  let system: TestSystem;
  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_JSON_TOOL_CALLS: 'false' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('shows the JSON form as text and still runs a tag', async () => {
    const socket = await connectChat(system.url, TEST_API_KEY);
    const events = new EventCollector(socket);
    try {
      const json = '{"response": "Planning.", "tool_call": {"name": "write_todos", "arguments": {"todos": []}}}';
      const first = await sendChat(socket, { message: rawDirective([json]) });
      await events.done(first.run_id);
      expect(events.ofRun(first.run_id).some((e) => e.event_type === 'tool_call')).toBe(false);
      const tag = '<tool_action name="write_todos"><todos value="[]" /></tool_action>';
      const second = await sendChat(socket, { message: rawDirective([tag]) });
      await events.done(second.run_id);
      expect(events.ofRun(second.run_id).find((e) => e.event_type === 'tool_call')).toMatchObject({ tool_name: 'write_todos' });
    } finally {
      socket.disconnect();
    }
  });
});
