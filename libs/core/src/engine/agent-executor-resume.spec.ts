import { ExecutionEvent, type EventDict } from '../events/execution-event.js';
import type { ChatMessage, ChatModel, ModelChunk, ModelRequest, ToolCallRequest } from '../llm/chat-model.js';
import type { Tool } from '../tools/tool.js';
import { AGENT_DEFAULTS } from './agent-config.js';
import { AgentExecutor } from './agent-executor.js';
import type { JournalStep, RunJournal } from './run-journal.js';

/**
 * A run cut at every point where it records something, then continued by a fresh executor from
 * what was recorded: the conversation comes out whole, what a client keeps (events up to the
 * resume point, then the continuation) reads as one uninterrupted answer, and no side-effecting
 * call runs twice.
 */

/** Plays the turn that matches how many assistant turns the conversation already has. */
class ConversationModel implements ChatModel {
  readonly id = 'conversation';
  constructor(private readonly turns: ModelChunk[][]) {}
  async *stream(req: ModelRequest): AsyncIterable<ModelChunk> {
    yield* this.turns[Math.min(req.messages.filter((m) => m.role === 'assistant').length, this.turns.length - 1)]!;
  }
}

const text = (...parts: string[]): ModelChunk[] => parts.map((t) => ({ type: 'text', text: t }));
const TURNS: ModelChunk[][] = [
  [...text('Let me look. '), { type: 'tool_calls', calls: [{ id: 'c1', name: 'lookup', arguments: { q: 'a' } }, { id: 'c2', name: 'send', arguments: { to: 'x' } }] }],
  text('Now <tool_action name="send"><to value="y" /></tool_action> then ', '<tool_action name="save"><v value="1" /></tool_action> and done.'),
  text('All ', 'finished.'),
];

/** Counts executions per call id, as the outside world would see them. */
function tools(executed: Map<string, number>): Tool[] {
  const counting = (name: string, flags: Partial<Tool>): Tool => ({
    name,
    description: name,
    parameters: { type: 'object' },
    ...flags,
    execute: async (_args, ctx) => {
      executed.set(ctx.toolCallId, (executed.get(ctx.toolCallId) ?? 0) + 1);
      return { success: true, output: `${name} ok` };
    },
  });
  return [counting('lookup', { readOnly: true }), counting('send', {}), counting('save', { idempotent: true })];
}

interface Snapshot {
  steps: Array<JournalStep & { seq: number }>;
  intents: Set<string>;
  /** Executions that had happened when the run was cut; a cut right after an intent counts the call as sent. */
  executed: Map<string, number>;
  cutAfterIntentOf?: string;
}

/** An in-memory journal that snapshots itself after every write (each one a point to cut the run at). */
class MemoryJournal implements RunJournal {
  readonly steps: Array<JournalStep & { seq: number }>;
  readonly intents: Set<string>;
  readonly snapshots: Snapshot[] = [];
  constructor(
    readonly resumed: Array<JournalStep & { seq: number }>,
    intents: Set<string>,
    private readonly emitted: () => number,
    private readonly executed: Map<string, number>,
  ) {
    this.steps = [...resumed];
    this.intents = new Set(intents);
  }
  async step(step: JournalStep): Promise<void> {
    this.steps.push(JSON.parse(JSON.stringify({ ...step, seq: this.emitted() })));
    this.snap();
  }
  async intend(call: ToolCallRequest, hash: string): Promise<'new' | 'interrupted'> {
    const key = `${call.id}:${hash}`;
    if (this.intents.has(key)) return 'interrupted';
    this.intents.add(key);
    this.snap(call.id);
    return 'new';
  }
  private snap(cutAfterIntentOf?: string) {
    const executed = new Map(this.executed);
    if (cutAfterIntentOf) executed.set(cutAfterIntentOf, (executed.get(cutAfterIntentOf) ?? 0) + 1);
    this.snapshots.push({ steps: [...this.steps], intents: new Set(this.intents), executed, cutAfterIntentOf });
  }
}

async function attempt(from: Snapshot | null, executed: Map<string, number>) {
  const events: EventDict[] = [];
  const messages: ChatMessage[] = [];
  const journal = new MemoryJournal(from?.steps ?? [], from?.intents ?? new Set(), () => events.length, executed);
  const exec = new AgentExecutor({ id: 'a', name: 'a', description: '', systemPrompt: 'sys', model: new ConversationModel(TURNS), tools: tools(executed), middleware: [], ...AGENT_DEFAULTS, maxToolCallsPerTurn: 10 });
  for await (const e of exec.execute('go', 's1', { runId: 'run-0001', caller: { tenantId: 't', userId: 'u', role: 'user' }, history: [], signal: new AbortController().signal, onMessage: (m) => messages.push(m), journal })) {
    events.push(e.toDict());
  }
  return { events, messages, journal };
}

const shown = (events: EventDict[]) => events.filter((e) => e.event_type === 'text').map((e) => e.content).join('');
const sequence = (events: EventDict[]) =>
  events.map((e) => `${e.event_type}:${String('tool_call_id' in e ? e.tool_call_id : 'content' in e ? e.content : '')}:${'status' in e ? e.status : ''}`);

describe('AgentExecutor continuing a run from its journal', () => {
  it('cut at every recorded point, continues to the same conversation and the same stream, with no side effect twice', async () => {
    const whole = await attempt(null, new Map());
    expect(whole.events.at(-1)).toMatchObject({ event_type: 'done', cancelled: false });
    expect(shown(whole.events)).toBe('Let me look. Now  then  and done.All finished.');
    const cuts = whole.journal.snapshots;
    expect(cuts.length).toBeGreaterThan(6);

    for (const [i, cut] of cuts.entries()) {
      const executed = new Map(cut.executed);
      const rest = await attempt(cut, executed);
      const context = `cut ${i} (after ${cut.cutAfterIntentOf ? `the intent of ${cut.cutAfterIntentOf}` : `step ${cut.steps.length}`})`;
      // A side-effecting call runs once across both attempts; read-only and idempotent ones may run again.
      for (const id of ['c2', 'run-0001-2-1']) expect([context, id, executed.get(id) ?? 0]).toEqual([context, id, 1]);
      expect(executed.get('run-0001-2-2')).toBeGreaterThanOrEqual(1);
      // What a client keeps: the first attempt's events up to the resume point, then the continuation.
      const resumeAfter = cut.steps.at(-1)?.seq ?? 0;
      const client = [...whole.events.slice(0, resumeAfter), ...rest.events];
      if (cut.cutAfterIntentOf === 'c2' || cut.cutAfterIntentOf === 'run-0001-2-1') {
        // Cut between a non-idempotent call's intent and its result: reported, never re-sent.
        const result = rest.events.filter((e) => e.event_type === 'tool_result').find((e) => e.tool_call_id === cut.cutAfterIntentOf);
        expect([context, result?.status]).toEqual([context, 'interrupted']);
        expect(rest.messages.find((m) => m.toolCallId === cut.cutAfterIntentOf)?.content).toContain('whether it took effect is unknown');
        continue;
      }
      expect([context, sequence(client)]).toEqual([context, sequence(whole.events)]);
      expect([context, rest.messages]).toEqual([context, whole.messages]);
    }
  });

  it('replays a recorded final answer without asking the model again', async () => {
    const whole = await attempt(null, new Map());
    const last = whole.journal.snapshots.at(-1)!;
    let asked = 0;
    const exec = new AgentExecutor({
      id: 'a',
      name: 'a',
      description: '',
      systemPrompt: 'sys',
      model: { id: 'm', stream: async function* () { asked++; yield* text('other'); } },
      tools: tools(new Map()),
      middleware: [],
      ...AGENT_DEFAULTS,
    });
    const events: EventDict[] = [];
    const journal = new MemoryJournal(last.steps, last.intents, () => events.length, new Map());
    for await (const e of exec.execute('go', 's1', { runId: 'run-0001', caller: { tenantId: 't', userId: 'u', role: 'user' }, history: [], signal: new AbortController().signal, journal })) events.push(e.toDict());
    expect(asked).toBe(0);
    expect(shown(events)).toBe('');
    expect(events.map((e) => e.event_type)).toEqual(['text', 'done']);
    expect(ExecutionEvent.fromDict(events[0]!)).toMatchObject({ isFinal: true });
  });
});
