import type { EventDict, UsageEventDict } from '../events/execution-event.js';
import type { ChatModel, ModelChunk, ModelRequest } from '../llm/chat-model.js';
import type { Tool } from '../tools/tool.js';
import { LlmRequestError } from '../llm/llm-request-error.js';
import type { CallClaim, CallGrant, CallSpend, ModelCallBudget } from '../usage/call-budget.js';
import { PriceTable } from '../usage/price-table.js';
import { AGENT_DEFAULTS, type AgentConfig } from './agent-config.js';
import { AgentExecutor, type ExecutionContext } from './agent-executor.js';

class ScriptedModel implements ChatModel {
  readonly id = 'openai:gpt-4o';
  readonly requests: ModelRequest[] = [];
  constructor(private readonly turns: Array<ModelChunk[] | ((req: ModelRequest) => AsyncIterable<ModelChunk>)>) {}
  async *stream(req: ModelRequest): AsyncIterable<ModelChunk> {
    this.requests.push(req);
    const turn = this.turns[Math.min(this.requests.length - 1, this.turns.length - 1)];
    if (typeof turn === 'function') yield* turn(req);
    else yield* turn;
  }
}

/** A budget of `left` tokens that records what it is asked and told. */
class TokenBudget implements ModelCallBudget {
  readonly claims: CallClaim[] = [];
  readonly settled: Array<{ call: number; spent: CallSpend }> = [];
  private reserved = new Map<number, number>();
  constructor(public left: number) {}
  async reserve(claim: CallClaim): Promise<CallGrant> {
    this.claims.push(claim);
    const out = Math.min(claim.maxOutputTokens, this.left - claim.inputTokens);
    if (out < 16) return { granted: false, exhausted: { scope: 'tenant', metric: 'tokens', period: 'day', limit: '1000', spent: String(1000 - this.left), resets_at: new Date(Date.now() + 3_600_000).toISOString() } };
    this.reserved.set(claim.call, claim.inputTokens + out);
    this.left -= claim.inputTokens + out;
    return { granted: true, maxOutputTokens: out };
  }
  async settle(call: number, spent: CallSpend): Promise<void> {
    this.settled.push({ call, spent });
    this.left += (this.reserved.get(call) ?? 0) - spent.inputTokens - spent.outputTokens;
    this.reserved.delete(call);
  }
}

const echo: Tool = { name: 'echo', description: 'Echoes.', parameters: { type: 'object' }, execute: async () => ({ success: true, output: 'echoed' }) };
const PRICES = PriceTable.parse({ 'gpt-4o': { input: '2.50', output: '10.00', cached_input: '1.25' } });
const toolTurn = (usage: ModelChunk[] = []): ModelChunk[] => [{ type: 'tool_calls', calls: [{ id: 'c1', name: 'echo', arguments: {} }] }, ...usage, { type: 'finish', reason: 'tool_calls' }];
const answer = (text: string, usage: ModelChunk[] = []): ModelChunk[] => [{ type: 'text', text }, ...usage, { type: 'finish', reason: 'stop' }];

function executor(model: ChatModel, overrides: Partial<AgentConfig> = {}) {
  return new AgentExecutor({ id: 'a', name: 'a', description: '', systemPrompt: 'sys', model, tools: [echo], middleware: [], ...AGENT_DEFAULTS, prices: PRICES, ...overrides });
}

async function run(exec: AgentExecutor, context: Partial<ExecutionContext> = {}): Promise<EventDict[]> {
  const out: EventDict[] = [];
  for await (const e of exec.execute('hi', 's1', { runId: 'run-1', caller: { tenantId: 't', userId: 'u', role: 'user' }, history: [], signal: new AbortController().signal, ...context })) out.push(e.toDict());
  return out;
}

const facts = (events: EventDict[]) => events.filter((e): e is UsageEventDict => e.event_type === 'usage');

describe("AgentExecutor's usage facts", () => {
  it("records each call's usage, priced exactly, before anything that follows from it; done sums them", async () => {
    const model = new ScriptedModel([
      toolTurn([{ type: 'usage', inputTokens: 1000, outputTokens: 20, cachedInputTokens: 400 }]),
      answer('done', [{ type: 'usage', inputTokens: 1100, outputTokens: 5 }]),
    ]);
    const events = await run(executor(model));
    expect(events.map((e) => e.event_type)).toEqual(['usage', 'tool_call', 'tool_result', 'text', 'usage', 'text', 'done']);
    // 600 × 2.5 + 400 × 1.25 + 20 × 10 = 2200 micro-units per million tokens; then 1100 × 2.5 + 5 × 10 = 2800.
    expect(facts(events)).toEqual([
      expect.objectContaining({ model: 'openai:gpt-4o', call: 1, input_tokens: 1000, output_tokens: 20, cached_input_tokens: 400, cost: '0.002200000000', currency: 'USD' }),
      expect.objectContaining({ call: 2, input_tokens: 1100, output_tokens: 5, cached_input_tokens: 0, cost: '0.002800000000' }),
    ]);
    expect(facts(events)[0]).not.toHaveProperty('estimated');
    expect(facts(events)[0]).not.toHaveProperty('priced');
    expect(events.at(-1)).toMatchObject({ usage: { input_tokens: 2100, output_tokens: 25 } });
  });

  it('marks an unpriced model, and an estimated call', async () => {
    const events = await run(executor(new ScriptedModel([answer('hello there')]), { prices: PriceTable.EMPTY }));
    expect(facts(events)).toEqual([expect.objectContaining({ estimated: true, priced: false, cost: '0.000000000000', output_tokens: 2 })]);
  });

  it('counts what a call cut short by a cancel got, and gives back a reservation the call never used', async () => {
    const stop = new AbortController();
    const budget = new TokenBudget(100_000);
    const model = new ScriptedModel([
      async function* () {
        yield { type: 'text', text: 'partial answer' };
        stop.abort();
        yield { type: 'text', text: ' more' };
      },
    ]);
    const events = await run(executor(model), { signal: stop.signal, budget });
    expect(events.at(-1)).toMatchObject({ event_type: 'done', cancelled: true });
    expect(facts(events)).toEqual([expect.objectContaining({ call: 1, estimated: true, output_tokens: 2 })]);
    expect(budget.settled).toEqual([{ call: 1, spent: expect.objectContaining({ outputTokens: 2 }) }]);

    const failing = new TokenBudget(100_000);
    const failed = await run(executor(new ScriptedModel([() => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new LlmRequestError('down', 500)) }) })])), { budget: failing });
    expect(facts(failed)).toEqual([]);
    expect(failing.settled).toEqual([{ call: 1, spent: { inputTokens: 0, outputTokens: 0, cost: 0n } }]);
    expect(failing.left).toBe(100_000);
  });
});

describe("AgentExecutor's budgets", () => {
  it('reserves each call before it, asks the model for no more than was granted, and settles to what it used', async () => {
    const budget = new TokenBudget(100_000);
    const model = new ScriptedModel([toolTurn([{ type: 'usage', inputTokens: 300, outputTokens: 10 }]), answer('ok', [{ type: 'usage', inputTokens: 320, outputTokens: 2 }])]);
    await run(executor(model, { defaultMaxOutputTokens: 500 }), { budget });
    expect(budget.claims.map((c) => ({ call: c.call, max: c.maxOutputTokens }))).toEqual([{ call: 1, max: 500 }, { call: 2, max: 500 }]);
    expect(budget.claims[0].inputTokens).toBeGreaterThan(0);
    expect(model.requests.map((r) => r.options?.maxTokens)).toEqual([500, 500]);
    expect(budget.settled.map((s) => s.spent)).toEqual([
      { inputTokens: 300, outputTokens: 10, cost: 850_000_000n },
      { inputTokens: 320, outputTokens: 2, cost: 820_000_000n },
    ]);
    expect(budget.left).toBe(100_000 - 632);
  });

  it("caps a call's answer to what the budget has left, and the client's max_tokens lowers it further", async () => {
    const budget = new TokenBudget(1000);
    const model = new ScriptedModel([answer('ok')]);
    await run(executor(model, { modelOptions: { maxTokens: 50 } }), { budget });
    expect(model.requests[0].options?.maxTokens).toBe(50);
    const tight = new TokenBudget(200);
    const capped = new ScriptedModel([answer('ok')]);
    await run(executor(capped), { budget: tight });
    expect(capped.requests[0].options?.maxTokens).toBe(200 - tight.claims[0].inputTokens);
  });

  it('ends the run cleanly when nothing is left: the answer so far is kept, then budget_exhausted and done{reason: budget}', async () => {
    const budget = new TokenBudget(1000);
    const model = new ScriptedModel([
      [{ type: 'text', text: 'Looking it up.' }, ...toolTurn([{ type: 'usage', inputTokens: 200, outputTokens: 900 }])],
      answer('never'),
    ]);
    const events = await run(executor(model, { defaultMaxOutputTokens: 900 }), { budget });
    expect(model.requests).toHaveLength(1);
    expect(events.filter((e) => e.event_type === 'text').map((e) => (e as { content: string }).content).join('')).toContain('Looking it up.');
    expect(events.slice(-2)).toEqual([
      expect.objectContaining({ event_type: 'error', error_code: 'budget_exhausted', recoverable: false, error: expect.stringMatching(/^Your organisation's daily token budget is spent/) }),
      expect.objectContaining({ event_type: 'done', cancelled: false, reason: 'budget' }),
    ]);
    expect((events.at(-2) as { retry_after?: number }).retry_after).toBeGreaterThan(3500);
  });

  it('ends the run on an answer a budget cut short: kept as it is, then budget_exhausted and done{reason: budget}; a cut the client asked for is no budget end', async () => {
    const cutAt = (reason: string): ModelChunk[] => [{ type: 'text', text: 'The answer so' }, { type: 'finish', reason }];
    const model = new ScriptedModel([cutAt('length')]);
    const events = await run(executor(model, { maxRunTokens: 80 }));
    // 80 tokens for the run, less the call's input: the model may answer with fewer than it would ask for.
    expect(model.requests[0]!.options?.maxTokens).toBeLessThan(80);
    expect(events.map((e) => e.event_type)).toEqual(['text', 'usage', 'text', 'error', 'done']);
    expect(events.at(-2)).toMatchObject({ error_code: 'budget_exhausted', error: expect.stringMatching(/^This run's token budget is spent/) });
    expect(events.at(-1)).toMatchObject({ reason: 'budget' });
    // The client's own max_tokens cut it: the run completes.
    const asked = await run(executor(new ScriptedModel([cutAt('length')]), { maxRunTokens: 100_000, modelOptions: { maxTokens: 5 } }));
    expect(asked.at(-1)).toMatchObject({ event_type: 'done' });
    expect(asked.at(-1)).not.toHaveProperty('reason');
  });

  it("holds a run to its own token limit, counting on from the attempts before it", async () => {
    const model = new ScriptedModel([toolTurn([{ type: 'usage', inputTokens: 400, outputTokens: 450 }]), answer('ok')]);
    const events = await run(executor(model, { maxRunTokens: 900 }));
    expect(model.requests).toHaveLength(1);
    expect(events.slice(-2)).toEqual([
      expect.objectContaining({ error_code: 'budget_exhausted', error: expect.stringMatching(/^This run's token budget is spent \(850 of 900 tokens\)/) }),
      expect.objectContaining({ event_type: 'done', reason: 'budget' }),
    ]);
    // A continuation of a run that had used 890 of its 900 tokens makes no call.
    const resumed = new ScriptedModel([answer('ok')]);
    const journal = { resumed: [{ message: { role: 'user' as const, content: 'hi' }, usage: { input_tokens: 800, output_tokens: 90 } }], step: async () => undefined, intend: async () => 'new' as const };
    const continued = await run(executor(resumed, { maxRunTokens: 900 }), { journal });
    expect(resumed.requests).toHaveLength(0);
    expect(continued.at(-1)).toMatchObject({ reason: 'budget' });
  });
});
