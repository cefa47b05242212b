import type { EventDict } from '../events/execution-event.js';
import type { ChatMessage, ChatModel, ModelChunk, ModelRequest, ToolSpec } from '../llm/chat-model.js';
import type { Tool } from '../tools/tool.js';
import { AGENT_DEFAULTS, type AgentConfig } from './agent-config.js';
import { countTokens } from '../usage/token-estimate.js';
import { AgentExecutor, type ExecutionContext } from './agent-executor.js';
import type { JournalStep, RunJournal } from './run-journal.js';

/** Plays one scripted turn per call and records what it was sent. */
class ScriptedModel implements ChatModel {
  readonly id = 'scripted';
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: ModelChunk[][]) {}
  async *stream(req: ModelRequest): AsyncIterable<ModelChunk> {
    this.requests.push({ ...req, messages: [...req.messages], tools: [...req.tools] });
    yield* this.turns[Math.min(this.requests.length - 1, this.turns.length - 1)]!;
  }
}

const executed: string[] = [];
const echo: Tool = {
  name: 'echo',
  description: 'Echoes its input.',
  parameters: { type: 'object', properties: { value: { type: 'string' } } },
  execute: async (args, ctx) => {
    executed.push(ctx.toolCallId);
    return { success: true, output: `echo:${String(args.value)}` };
  },
};
const weather: ToolSpec = { name: 'get_weather', description: 'Weather for a city (the client runs it)', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
const text = (...parts: string[]): ModelChunk[] => parts.map((t) => ({ type: 'text', text: t }));

function executor(model: ChatModel, overrides: Partial<AgentConfig> = {}) {
  return new AgentExecutor({ id: 'a', name: 'a', description: '', systemPrompt: 'sys', model, tools: [echo], clientTools: [weather], middleware: [], ...AGENT_DEFAULTS, ...overrides });
}

/** The run's events but its `usage` facts (agent-executor-usage.spec.ts reads those). */
async function run(exec: AgentExecutor, context: Partial<ExecutionContext> = {}, input = 'hi'): Promise<EventDict[]> {
  const out: EventDict[] = [];
  for await (const e of exec.execute(input, 's1', { runId: 'run-1', caller: { tenantId: 't', userId: 'u', role: 'user' }, history: [], signal: new AbortController().signal, ...context })) if (e.eventType !== 'usage') out.push(e.toDict());
  return out;
}

const types = (events: EventDict[]) => events.map((e) => e.event_type);

describe("AgentExecutor with the client's tools", () => {
  beforeEach(() => executed.splice(0));

  it("offers them beside its own, runs its own calls of the turn, and ends at the client's with done{tool_calls}", async () => {
    const model = new ScriptedModel([
      [...text('Checking. '), { type: 'tool_calls', calls: [{ id: 'c1', name: 'echo', arguments: { value: 'x' } }, { id: 'c2', name: 'get_weather', arguments: { city: 'Oslo' } }] }, { type: 'finish', reason: 'tool_calls' }],
      text('never asked'),
    ]);
    const events = await run(executor(model));
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['echo', 'get_weather']);
    expect(types(events)).toEqual(['text', 'tool_call', 'tool_result', 'tool_call', 'text', 'done']);
    expect(events[1]).not.toHaveProperty('client');
    expect(events[3]).toMatchObject({ tool_name: 'get_weather', tool_args: { city: 'Oslo' }, tool_call_id: 'c2', client: true });
    expect(events[4]).toMatchObject({ content: '', is_final: true });
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false, reason: 'tool_calls' });
    expect(executed).toEqual(['c1']);
  });

  it('continues from their results: the model sees its call and the results in order, with no user message after them', async () => {
    const model = new ScriptedModel([text('It is sunny in Oslo.')]);
    const history: ChatMessage[] = [
      { role: 'user', content: 'weather in Oslo?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'get_weather', arguments: { city: 'Oslo' } }] },
    ];
    const toolResults: ChatMessage[] = [{ role: 'tool', toolCallId: 'c2', name: 'get_weather', content: '{"sky":"sunny"}' }];
    const events = await run(executor(model), { history, toolResults }, '');
    expect(model.requests[0]!.messages.slice(1)).toEqual([...history, ...toolResults]);
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    expect(events.at(-1)).not.toHaveProperty('reason');
  });

  it('refuses a client tool named like one of its own before any model call', async () => {
    const model = new ScriptedModel([text('never asked')]);
    const events = await run(executor(model, { clientTools: [weather, { ...weather, name: 'echo' }] }));
    expect(model.requests).toHaveLength(0);
    expect(types(events)).toEqual(['error', 'done']);
    expect(events[0]).toMatchObject({ error_code: 'client_tool_conflict', recoverable: false, error: expect.stringContaining('"echo"') });
  });

  it('ends again at the same call, without running it, when a worker continues the run from its journal', async () => {
    const calls = [{ id: 'c2', name: 'get_weather', arguments: { city: 'Oslo' } }];
    const resumed: JournalStep[] = [{ message: { role: 'assistant', content: '', toolCalls: calls }, plan: [{ type: 'tool_call', call: calls[0]!, raw: '' }], usage: { input_tokens: 40, output_tokens: 5 } }];
    const journal: RunJournal = { resumed, step: async () => {}, intend: async () => 'new' };
    const model = new ScriptedModel([text('never asked')]);
    const events = await run(executor(model), { journal });
    expect(model.requests).toHaveLength(0);
    expect(types(events)).toEqual(['tool_call', 'text', 'done']);
    expect(events.at(-1)).toMatchObject({ reason: 'tool_calls', usage: { input_tokens: 40, output_tokens: 5 } });
  });
});

describe("AgentExecutor's usage", () => {
  it('sums what the provider reported over the model calls of the run, on its done', async () => {
    const model = new ScriptedModel([
      [{ type: 'tool_calls', calls: [{ id: 'c1', name: 'echo', arguments: { value: 'x' } }] }, { type: 'usage', inputTokens: 120, outputTokens: 8 }, { type: 'finish', reason: 'tool_calls' }],
      [...text('done'), { type: 'usage', inputTokens: 150, outputTokens: 3 }, { type: 'finish', reason: 'stop' }],
    ]);
    const events = await run(executor(model));
    expect(events.at(-1)).toMatchObject({ event_type: 'done', usage: { input_tokens: 270, output_tokens: 11 } });
    expect(events.at(-1)!).not.toHaveProperty('usage.estimated');
  });

  it("estimates a call that reported nothing with the model family's tokenizer, and says so", async () => {
    const answer = 'The orders table has 1,204 rows from last week.';
    const events = await run(executor(new ScriptedModel([text(answer)])), {}, 'How many rows does the orders table have? '.repeat(10));
    const usage = (events.at(-1) as { usage?: { input_tokens: number; output_tokens: number; estimated?: boolean } }).usage;
    expect(usage).toMatchObject({ output_tokens: await countTokens('scripted', answer), estimated: true });
    // The question alone is its tokens; the system prompt, the tools and the framing add more.
    expect(usage!.input_tokens).toBeGreaterThan(await countTokens('scripted', 'How many rows does the orders table have? '.repeat(10)));
  });
});
