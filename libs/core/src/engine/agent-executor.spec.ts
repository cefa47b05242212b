import { ElicitationEvent, ElicitationRequestEvent, type EventDict } from '../events/execution-event.js';
import type { ElicitationAnswer, ElicitationHandler } from '../hitl/elicitation.js';
import type { ChatModel, ModelChunk, ModelRequest } from '../llm/chat-model.js';
import type { Tool } from '../tools/tool.js';
import { REFUSE_APPROVALS } from '../hitl/hitl-handler.js';
import { LlmRequestError } from '../llm/llm-request-error.js';
import { AGENT_DEFAULTS, type AgentConfig } from './agent-config.js';
import { AgentExecutor } from './agent-executor.js';

/** A model that plays one scripted turn per call and records what it was sent. */
class ScriptedModel implements ChatModel {
  readonly id = 'scripted';
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: Array<ModelChunk[] | ((req: ModelRequest) => AsyncIterable<ModelChunk>)>) {}
  async *stream(req: ModelRequest): AsyncIterable<ModelChunk> {
    this.requests.push({ ...req, messages: [...req.messages] });
    const turn = this.turns[Math.min(this.requests.length - 1, this.turns.length - 1)];
    if (typeof turn === 'function') yield* turn(req);
    else yield* turn;
  }
}

const text = (...parts: string[]): ModelChunk[] => parts.map((t) => ({ type: 'text', text: t }));
const echo: Tool = {
  name: 'echo',
  description: 'Echoes its input.',
  parameters: { type: 'object', properties: { value: { type: 'string' }, times: { type: 'integer' } }, required: ['value'] },
  execute: async (args) => ({ success: true, output: `echo:${String(args.value)}${args.times ? `x${args.times}` : ''}` }),
};
const hang: Tool = { name: 'hang', description: 'Never ends.', parameters: { type: 'object' }, timeoutMs: 50, execute: () => new Promise(() => {}) };

function executor(model: ChatModel, overrides: Partial<AgentConfig> = {}) {
  return new AgentExecutor({ id: 'a', name: 'a', description: '', systemPrompt: 'sys', model, tools: [echo, hang], middleware: [], ...AGENT_DEFAULTS, ...overrides });
}

/** The run's events but its `usage` facts (agent-executor-usage.spec.ts reads those). */
async function run(exec: AgentExecutor, input = 'hi', signal = new AbortController().signal): Promise<EventDict[]> {
  const out: EventDict[] = [];
  for await (const e of exec.execute(input, 's1', { runId: 'run-1', caller: { tenantId: 't', userId: 'u', role: 'user' }, history: [], signal })) if (e.eventType !== 'usage') out.push(e.toDict());
  return out;
}

const types = (events: EventDict[]) => events.map((e) => e.event_type);
const shown = (events: EventDict[]) => events.filter((e) => e.event_type === 'text').map((e) => e.content).join('');

describe('AgentExecutor', () => {
  it('streams text and ends with exactly one done', async () => {
    const events = await run(executor(new ScriptedModel([text('Hel', 'lo')])));
    expect(types(events)).toEqual(['text', 'text', 'text', 'done']);
    expect(shown(events)).toBe('Hello');
    expect(events.at(-1)).toMatchObject({ cancelled: false });
  });

  it('runs native tool calls and sends results back as tool messages', async () => {
    const model = new ScriptedModel([[{ type: 'tool_calls', calls: [{ id: 'c1', name: 'echo', arguments: { value: 'x' } }] }], text('done')]);
    const events = await run(executor(model));
    expect(types(events)).toEqual(['tool_call', 'tool_result', 'text', 'text', 'done']);
    expect(events[1]).toMatchObject({ tool_call_id: 'c1', status: 'success', result: 'echo:x' });
    expect(model.requests[1].messages.at(-1)).toMatchObject({ role: 'tool', name: 'echo', toolCallId: 'c1', content: 'echo:x' });
  });

  it('runs a tag split over three chunks: text before it at once, text after it after the result', async () => {
    const model = new ScriptedModel([text('思考: 我需要搜索...<tool_action name="', 'echo"><value value="test"', '" /></tool_action>接下来...'), text('ok')]);
    const events = await run(executor(model));
    expect(events[0]).toMatchObject({ event_type: 'text', content: '思考: 我需要搜索...' });
    const order = events.map((e) => (e.event_type === 'text' ? `text:${e.content}` : e.event_type));
    expect(order.slice(0, 4)).toEqual(['text:思考: 我需要搜索...', 'tool_call', 'tool_result', 'text:接下来...']);
    expect(events[2]).toMatchObject({ status: 'success', result: 'echo:test' });
    expect(model.requests[1].messages.at(-1)).toMatchObject({ role: 'tool', name: 'echo' });
  });

  it('runs several tags in order, each with its own result, coercing string values to the schema', async () => {
    const model = new ScriptedModel([text('<tool_action name="echo"><value value="a" /><times value="2" /></tool_action> and <tool_action name="echo"><value value="b" /></tool_action>'), text('ok')]);
    const events = await run(executor(model));
    const results = events.filter((e) => e.event_type === 'tool_result').map((e) => e.result);
    expect(results).toEqual(['echo:ax2', 'echo:b']);
    expect(types(events).slice(0, 5)).toEqual(['tool_call', 'tool_result', 'text', 'tool_call', 'tool_result']);
  });

  it('never executes an unclosed tag and shows it as text', async () => {
    const events = await run(executor(new ScriptedModel([text('see <tool_action name="echo"><value value="x" />')])));
    expect(types(events)).not.toContain('tool_call');
    expect(shown(events)).toBe('see <tool_action name="echo"><value value="x" />');
  });

  it('shows tags as text when parsing is off, and when native tool calls come too', async () => {
    const tag = '<tool_action name="echo"><value value="x" /></tool_action>';
    const off = await run(executor(new ScriptedModel([text(tag)]), { enableToolActionParsing: false }));
    expect(types(off)).not.toContain('tool_call');
    expect(shown(off)).toBe(tag);

    const both = new ScriptedModel([[...text('a ', tag, ' b'), { type: 'tool_calls', calls: [{ id: 'n1', name: 'echo', arguments: { value: 'native' } }] }], text('end')]);
    const events = await run(executor(both));
    expect(events.filter((e) => e.event_type === 'tool_call').map((e) => e.tool_call_id)).toEqual(['n1']);
    expect(shown(events)).toContain(tag);
  });

  it('understands the JSON tool_call form', async () => {
    const model = new ScriptedModel([text('{"response": "Looking.", "tool_call": {"name": "echo", ', '"arguments": {"value": "j"}}}'), text('fine')]);
    const events = await run(executor(model));
    expect(events[0]).toMatchObject({ event_type: 'text', content: 'Looking.' });
    expect(events.find((e) => e.event_type === 'tool_result')).toMatchObject({ result: 'echo:j' });
  });

  it('returns Tool not found and invalid arguments to the model, and goes on', async () => {
    const model = new ScriptedModel([[{ type: 'tool_calls', calls: [{ id: 'c1', name: 'nope', arguments: {} }, { id: 'c2', name: 'echo', arguments: {} }] }], text('ok')]);
    const events = await run(executor(model));
    const results = events.filter((e) => e.event_type === 'tool_result');
    expect(results[0]).toMatchObject({ status: 'error', result: { success: false, error: 'Tool not found: nope' } });
    expect(results[1].status).toBe('error');
    expect(JSON.stringify(results[1].result)).toContain('value');
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
  });

  it('gives a hanging tool a timeout result and still finishes', async () => {
    const model = new ScriptedModel([[{ type: 'tool_calls', calls: [{ id: 'h', name: 'hang', arguments: {} }] }], text('after')]);
    const events = await run(executor(model));
    expect(events.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'timeout' });
    expect(shown(events)).toContain('after');
  });

  it('stops at the per-turn tool-call limit and at the iteration limit, with a clear message', async () => {
    const call = { type: 'tool_calls' as const, calls: [1, 2, 3, 4].map((i) => ({ id: `c${i}`, name: 'echo', arguments: { value: String(i) } })) };
    const limited = await run(executor(new ScriptedModel([[call]]), { maxToolCallsPerTurn: 3 }));
    expect(limited.filter((e) => e.event_type === 'tool_result')).toHaveLength(3);
    expect(shown(limited)).toMatch(/Tool-call limit of 3/);

    const forever = new ScriptedModel([[{ type: 'tool_calls', calls: [{ id: 'x', name: 'echo', arguments: { value: 'v' } }] }]]);
    const looped = await run(executor(forever, { maxIterations: 2, maxToolCallsPerTurn: 10 }));
    expect(shown(looped)).toMatch(/Stopped after 2 iterations/);
    expect(types(looped).filter((t) => t === 'done')).toHaveLength(1);
  });

  it('turns a model failure into an error event and one done', async () => {
    const failing = new ScriptedModel([
      async function* () {
        yield { type: 'text', text: 'par' } as ModelChunk;
        throw new Error('upstream 500');
      },
    ]);
    const events = await run(executor(failing));
    expect(types(events)).toEqual(['text', 'error', 'done']);
    expect(events[1]).toMatchObject({ error: 'upstream 500', recoverable: false });
  });

  it('reports a busy provider as a recoverable error carrying its retry-after', async () => {
    const busy = (status: number, retryAfter?: number) =>
      new ScriptedModel([
        async function* () {
          yield* [] as ModelChunk[];
          throw new LlmRequestError(`LLM busy (${status})`, status, retryAfter);
        },
      ]);
    const overloaded = await run(executor(busy(529, 7)));
    expect(types(overloaded)).toEqual(['error', 'done']);
    expect(overloaded[0]).toMatchObject({ error: 'LLM busy (529)', recoverable: true, error_code: 'llm_overloaded', retry_after: 7 });
    expect(overloaded[1]).toMatchObject({ cancelled: false });

    const limited = await run(executor(busy(429)));
    expect(limited[0]).toMatchObject({ recoverable: true, error_code: 'llm_rate_limited' });
    expect(limited[0]).not.toHaveProperty('retry_after');

    const denied = await run(executor(busy(401)));
    expect(denied[0]).toMatchObject({ recoverable: false, error_code: 'run_failed' });
  });

  it('ends cancelled when the signal fires mid-stream', async () => {
    const controller = new AbortController();
    const model = new ScriptedModel([
      async function* (req) {
        yield { type: 'text', text: 'a' } as ModelChunk;
        controller.abort();
        if (req.signal.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      },
    ]);
    const events = await run(executor(model), 'hi', controller.signal);
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: true });
    expect(types(events).filter((t) => t === 'done')).toHaveLength(1);
  });

  it('refuses a sensitive call whose arguments break the schema without asking for approval', async () => {
    const asked: string[] = [];
    const hitl = { requestApproval: async (action: { name: string }) => (asked.push(action.name), { type: 'approve' as const }) };
    const guarded: Tool = { ...echo, name: 'guarded', sensitive: true };
    const calls = (args: Record<string, unknown>): ModelChunk[] => [{ type: 'tool_calls', calls: [{ id: `c${asked.length}`, name: 'guarded', arguments: args }] }, { type: 'finish', reason: 'tool_calls' }];
    const exec = (args: Record<string, unknown>) => executor(new ScriptedModel([calls(args), text('ok')]), { tools: [guarded], hitl });
    const invalid = await run(exec({ times: 2 }));
    expect(types(invalid)).not.toContain('hitl_request');
    expect(asked).toEqual([]);
    expect(invalid.find((e) => e.event_type === 'tool_result')).toMatchObject({ status: 'error', result: { details: { error_code: 'invalid_arguments', invalid_arguments: [{ field: 'value', problem: 'is required' }] } } });
    const valid = await run(exec({ value: 'v' }));
    expect(types(valid)).toContain('hitl_request');
    expect(asked).toEqual(['guarded']);
  });

  it('dates a question with the handler’s timeout, so clients can count down to the automatic rejection', async () => {
    const guarded: Tool = { ...echo, name: 'guarded', sensitive: true };
    const turns = (): ModelChunk[][] => [[{ type: 'tool_calls', calls: [{ id: 'c1', name: 'guarded', arguments: { value: 'v' } }] }, { type: 'finish', reason: 'tool_calls' }], text('ok')];
    const approve = async () => ({ type: 'approve' as const });
    const before = Date.now();
    const timed = await run(executor(new ScriptedModel(turns()), { tools: [guarded], hitl: { requestApproval: approve, timeoutMs: 90_000 } }));
    const after = Date.now();
    const expires = Date.parse(String(timed.find((e) => e.event_type === 'hitl_request')?.expires_at));
    expect(expires).toBeGreaterThanOrEqual(before + 90_000);
    expect(expires).toBeLessThanOrEqual(after + 90_000);
    const untimed = await run(executor(new ScriptedModel(turns()), { tools: [guarded], hitl: { requestApproval: approve } }));
    expect(untimed.find((e) => e.event_type === 'hitl_request')).not.toHaveProperty('expires_at');
  });

  it('tells the model of a refusal it should hear (REFUSE_APPROVALS) and goes on, where a person’s rejection ends the run', async () => {
    const guarded: Tool = { ...echo, name: 'guarded', sensitive: true };
    const turns = (): Array<ModelChunk[]> => [[{ type: 'tool_calls', calls: [{ id: 'c1', name: 'guarded', arguments: { value: 'v' } }] }, { type: 'finish', reason: 'tool_calls' }], text('answered without it')];
    const told = new ScriptedModel(turns());
    const refused = await run(executor(told, { tools: [guarded], hitl: REFUSE_APPROVALS }));
    expect(types(refused)).toEqual(['tool_call', 'tool_result', 'text', 'text', 'done']);
    expect(refused[1]).toMatchObject({ status: 'rejected' });
    expect(shown(refused)).toBe('answered without it');
    expect(String(told.requests[1]!.messages.at(-1)!.content)).toContain('nobody can be asked');
    expect(refused.at(-1)).toMatchObject({ cancelled: false });

    const person = await run(executor(new ScriptedModel(turns()), { tools: [guarded], hitl: { requestApproval: async () => ({ type: 'reject' as const, message: 'no' }) } }));
    expect(types(person)).toEqual(['tool_call', 'hitl_request', 'tool_result', 'done']);
    expect(person.at(-1)).toMatchObject({ cancelled: true });
  });

  it('sends what a tool asks the person while the call still runs, then the call’s result', async () => {
    const asking: Tool = {
      name: 'book',
      description: 'Books; asks who comes.',
      parameters: { type: 'object' },
      execute: async (_args, ctx) => {
        const answer = await ctx.elicit!({ server: 'shop', mode: 'form', message: 'Who comes?', requestedSchema: { type: 'object', properties: {} } }, ctx.signal);
        return { success: true, output: `answered ${answer.action}` };
      },
    };
    // The person answers only once they see the question: it must come out before the call ends.
    let answer!: (a: ElicitationAnswer) => void;
    const elicitation: ElicitationHandler = {
      ask: (prompt, call) =>
        new Promise((resolve) => {
          expect(call).toMatchObject({ runId: 'run-1', sessionId: 's1', toolCallId: 'c1' });
          call.emit((env) => new ElicitationRequestEvent(env, 'e1', call.toolCallId, prompt, '2030-01-01T00:00:00.000Z'));
          answer = (a) => {
            call.emit((env) => new ElicitationEvent(env, 'e1', a.action));
            resolve(a);
          };
        }),
    };
    const model = new ScriptedModel([[{ type: 'tool_calls', calls: [{ id: 'c1', name: 'book', arguments: {} }] }], text('ok')]);
    const events: EventDict[] = [];
    for await (const event of executor(model, { tools: [asking], elicitation }).execute('hi', 's1', { runId: 'run-1', caller: { tenantId: 't', userId: 'u', role: 'user' }, history: [], signal: new AbortController().signal })) {
      if (event.eventType !== 'usage') events.push(event.toDict());
      if (event.eventType === 'elicitation_request') answer({ action: 'decline' });
    }
    expect(types(events)).toEqual(['tool_call', 'elicitation_request', 'elicitation', 'tool_result', 'text', 'text', 'done']);
    expect(events[1]).toMatchObject({ tool_call_id: 'c1', server: 'shop', message: 'Who comes?' });
    expect(events[3]).toMatchObject({ status: 'success', result: 'answered decline' });
  });

  it('gives a tool nobody to ask when the run has no elicitation handler', async () => {
    let offered: unknown = 'unset';
    const probe: Tool = { name: 'probe', description: '', parameters: { type: 'object' }, execute: async (_args, ctx) => ((offered = ctx.elicit), { success: true, output: 'ok' }) };
    const model = new ScriptedModel([[{ type: 'tool_calls', calls: [{ id: 'c1', name: 'probe', arguments: {} }] }], text('ok')]);
    await run(executor(model, { tools: [probe] }));
    expect(offered).toBeUndefined();
  });
});
