import {
  DoneEvent,
  ErrorEvent,
  type EventEnvelope,
  ExecutionEvent,
  HitlRequestEvent,
  TextEvent,
  ToolCallEvent,
  ToolResultEvent,
  type ToolResultStatus,
  UsageEvent,
} from '../events/execution-event.js';
import type { ChatMessage, ToolCallRequest, ToolSpec } from '../llm/chat-model.js';
import { coalesceText } from '../llm/coalesce-text.js';
import { LlmRequestError } from '../llm/llm-request-error.js';
import type { Caller } from '../auth/caller.js';
import { ToolDispatcher } from '../tools/tool-dispatcher.js';
import { capToolContent, capToolOutput, DEFAULT_TOOL_RESULT_MAX_BYTES } from '../tools/tool-output-cap.js';
import { argsHash } from '../tools/call-hash.js';
import { wireToolName } from '../tools/tool-names.js';
import { isReadOnlyCall, type ToolContext, type ToolResult } from '../tools/tool.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, type AgentConfig } from './agent-config.js';
import type { JournalStep, RunJournal } from './run-journal.js';
import { TextToolCalls, type TurnSegment } from './text-tool-calls.js';
import { composeToolCall, type ModelCallState, type ToolCallHandler } from './agent-middleware.js';
import { UsageTally } from './usage-tally.js';
import { AllBudgets, RunTokenLimit, type BudgetExhaustion, type ModelCallBudget } from '../usage/call-budget.js';
import { CallMeter, type ReportedUsage } from '../usage/call-meter.js';
import { PriceTable } from '../usage/price-table.js';
import { LiveEvents } from './live-events.js';
import { approvalRequestId } from '../hitl/approval-request-id.js';

export interface ExecutionContext {
  runId: string;
  caller: Caller;
  /** The conversation before this turn, oldest first. */
  history: ChatMessage[];
  /**
   * The results of the client's tools the last assistant turn of `history` called: the turn
   * continues from them instead of from a user message (`userInput` is then unused).
   */
  toolResults?: ChatMessage[];
  /** Cancels the run: the model stream and any tool in flight stop. */
  signal: AbortSignal;
  /** Receives each message the run adds to the conversation, in order (replayed ones too). */
  onMessage?: (message: ChatMessage) => void;
  /** Records the run's steps and tool intents, and holds what earlier attempts recorded. */
  journal?: RunJournal;
  /** The tenant's and the person's budgets the run's model calls draw on; absent, none. */
  budget?: ModelCallBudget;
}

/**
 * Runs one turn of an agent: streams the model, executes tool calls, loops until the
 * model answers without tools. Never throws: failures become an `error` event, and
 * every run ends with exactly one `done`.
 */
export class AgentExecutor {
  private readonly dispatcher: ToolDispatcher;
  private readonly callTool: ToolCallHandler;
  /** The client's tools by name; the model may call them, the run never runs them. */
  private readonly clientTools: Map<string, ToolSpec>;

  constructor(readonly config: AgentConfig) {
    this.dispatcher = new ToolDispatcher(config.tools, config.toolTimeoutMs);
    this.callTool = composeToolCall(config.middleware, (call, ctx) => this.dispatcher.dispatch(call, ctx));
    this.clientTools = new Map((config.clientTools ?? []).map((spec) => [spec.name, spec]));
  }

  async *execute(userInput: string, sessionId: string, context: ExecutionContext): AsyncGenerator<ExecutionEvent> {
    const envelope: EventEnvelope = { sessionId, runId: context.runId };
    const usage = new UsageTally(context.journal?.resumed.at(-1)?.usage);
    const meter = this.meter(usage, context.budget);
    // A client's tool that would shadow (or be shadowed by) one of the run's own is refused before any model call.
    const shadowing = [...this.clientTools.keys()].filter((name) => this.dispatcher.get(name));
    if (shadowing.length > 0) {
      yield new ErrorEvent(envelope, `The client's tools ${shadowing.map((n) => `"${n}"`).join(', ')} have the names of the assistant's own tools; rename them`, false, 'client_tool_conflict');
      yield new DoneEvent(envelope, false, undefined, usage.total());
      return;
    }
    let cancelled = false;
    let reason: string | undefined;
    try {
      const outcome = yield* this.loop(userInput, envelope, context, usage, meter);
      cancelled = outcome.cancelled;
      reason = outcome.reason;
    } catch (err) {
      if (context.signal.aborted) {
        cancelled = true;
        reason = 'cancelled';
      } else if (err instanceof LlmRequestError && err.recoverable) {
        // The provider is busy, not the request wrong: the client may send it again, after retry_after.
        const code = err.status === 429 ? 'llm_rate_limited' : 'llm_overloaded';
        yield new ErrorEvent(envelope, err.publicMessage, true, code, undefined, err.retryAfterSeconds);
      } else {
        yield new ErrorEvent(envelope, describeError(err), false, 'run_failed');
      }
    }
    yield new DoneEvent(envelope, cancelled, reason, usage.total());
  }

  /** The run's meter: its own token limit (counted on from earlier attempts) and the shared budgets, as one. */
  private meter(usage: UsageTally, shared: ModelCallBudget | undefined): CallMeter {
    const { config } = this;
    const budgets = [...(config.maxRunTokens ? [new RunTokenLimit(config.maxRunTokens, usage.tokens)] : []), ...(shared ? [shared] : [])];
    return new CallMeter({
      model: config.model.id,
      prices: config.prices ?? PriceTable.EMPTY,
      ...(budgets.length > 0 ? { budget: budgets.length === 1 ? budgets[0] : new AllBudgets(budgets) } : {}),
      defaultMaxOutputTokens: config.defaultMaxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    });
  }

  private async *loop(
    userInput: string,
    envelope: EventEnvelope,
    context: ExecutionContext,
    usage: UsageTally,
    meter: CallMeter,
  ): AsyncGenerator<ExecutionEvent, Outcome> {
    const { config } = this;
    const journal = context.journal;
    const input: ChatMessage[] = context.toolResults?.length ? context.toolResults : [{ role: 'user', content: userInput }];
    const messages: ChatMessage[] = [{ role: 'system', content: config.systemPrompt }, ...context.history, ...input];
    const tally: Tally = { iterations: 0, toolCalls: 0 };
    // Each message is recorded before the events that follow from it go out.
    const add: AddMessage = async (message, step) => {
      if (journal) await journal.step({ message, ...step, usage: usage.total() });
      messages.push(message);
      context.onMessage?.(message);
    };

    // A run continued by another worker: what earlier attempts recorded is replayed, not redone.
    const resumed = journal?.resumed ?? [];
    for (const step of resumed) {
      messages.push(step.message);
      context.onMessage?.(step.message);
      if (step.message.role === 'assistant') tally.iterations++;
      if (step.message.role === 'tool') tally.toolCalls++;
    }
    const last = resumed.at(-1);
    if (last) {
      for (const dict of last.replay ?? []) yield ExecutionEvent.fromDict(dict);
      if (last.end) return { cancelled: false, reason: last.end };
      const turnAt = resumed.findLastIndex((s) => s.message.role === 'assistant');
      const turn = resumed[turnAt];
      if (turn && !turn.message.toolCalls?.length) return { cancelled: false };
      if (turn) {
        const answered = new Set(resumed.slice(turnAt + 1).map((s) => s.message.toolCallId));
        const outcome = yield* this.runPlan(turn.plan ?? [], answered, envelope, context, tally, add);
        if (outcome !== 'continue') return outcome;
      }
    }

    while (tally.iterations < config.maxIterations) {
      const iteration = ++tally.iterations;
      const state: ModelCallState = {
        sessionId: envelope.sessionId,
        runId: envelope.runId,
        iteration,
        messages: [...messages],
        tools: [...this.dispatcher.specs(), ...this.clientTools.values()],
        signal: context.signal,
      };
      for (const mw of config.middleware) await mw.beforeModel?.(state);
      if (context.signal.aborted) return { cancelled: true, reason: 'cancelled' };

      // The call's worst case is reserved from the run's budgets first; none left ends the run.
      const grant = await meter.claim(iteration, state, config.modelOptions?.maxTokens);
      if (!grant.granted) {
        yield budgetError(envelope, grant.exhausted);
        return { cancelled: false, reason: 'budget' };
      }
      const options = meter.budgeted ? { ...config.modelOptions, maxTokens: grant.maxOutputTokens } : config.modelOptions;

      let text = '';
      let toolCalls: ToolCallRequest[] = [];
      let finishReason = 'stop';
      let reported: ReportedUsage | undefined;
      let callNumber = 0;
      const turn = new TextToolCalls({
        parseTags: config.enableToolActionParsing !== false,
        parseJson: config.enableJsonToolCalls !== false,
        newId: () => `${envelope.runId.slice(0, 8)}-${iteration}-${++callNumber}`,
      });
      // A call cut short (cancelled, or failed mid-answer) still counts what it got; one that got nothing gives its reservation back.
      let answered = false;
      const cutShort = async () => (answered || text !== '' ? meter.record(iteration, reported, state, { text, toolCalls }) : (await meter.release(iteration), undefined));
      try {
        for await (const chunk of coalesceText(config.model.stream({ messages: state.messages, tools: state.tools, signal: context.signal, ...(options ? { options } : {}) }), config.textCoalesceMs ?? 0)) {
          if (context.signal.aborted) break;
          if (chunk.type === 'text' && chunk.text) {
            text += chunk.text;
            const now = turn.push(chunk.text);
            if (now) yield new TextEvent(envelope, now, false);
          } else if (chunk.type === 'tool_calls') {
            toolCalls = chunk.calls;
          } else if (chunk.type === 'usage') {
            reported = { inputTokens: chunk.inputTokens, outputTokens: chunk.outputTokens, ...(chunk.cachedInputTokens ? { cachedInputTokens: chunk.cachedInputTokens } : {}) };
          } else if (chunk.type === 'finish') {
            finishReason = chunk.reason;
            answered = true;
          }
        }
      } catch (err) {
        const spent = await cutShort();
        if (spent) {
          usage.add(spent);
          yield new UsageEvent(envelope, spent);
        }
        throw err;
      }
      if (context.signal.aborted) {
        const spent = await cutShort();
        if (spent) {
          usage.add(spent);
          yield new UsageEvent(envelope, spent);
        }
        return { cancelled: true, reason: 'cancelled' };
      }
      // Native tool calls win; otherwise calls written in the text run in order with the text between them.
      const rest = turn.end(toolCalls.length > 0);
      const textCalls = rest.flatMap((s) => (s.type === 'tool_call' ? [s.call] : []));
      if (toolCalls.length === 0) toolCalls = textCalls;
      // The call's usage is a fact of the run's log before anything that follows from it.
      const spent = await meter.record(iteration, reported, state, { text, toolCalls });
      usage.add(spent);
      yield new UsageEvent(envelope, spent);
      for (const mw of config.middleware) await mw.afterModel?.(state, { text, toolCalls, finishReason });

      if (toolCalls.length === 0) {
        const shown = [...rest.flatMap((s) => (s.type === 'text' ? [new TextEvent(envelope, s.text, false)] : [])), new TextEvent(envelope, '', true)];
        await add({ role: 'assistant', content: text }, { replay: shown.map((e) => e.toDict()) });
        yield* shown;
        // An answer cut where a budget capped it was cut by the budget: kept as it is, and the run ends saying so.
        if (finishReason === 'length' && grant.limitedBy) {
          yield budgetError(envelope, grant.limitedBy);
          return { cancelled: false, reason: 'budget' };
        }
        return { cancelled: false };
      }

      const plan: TurnSegment[] = textCalls.length > 0 ? rest : [...rest, ...toolCalls.map((call) => ({ type: 'tool_call' as const, call, raw: '' }))];
      await add({ role: 'assistant', content: text, toolCalls }, { plan });
      const outcome = yield* this.runPlan(plan, new Set(), envelope, context, tally, add);
      if (outcome !== 'continue') return outcome;
    }
    const note = `Stopped after ${config.maxIterations} iterations without a final answer.`;
    yield new TextEvent(envelope, `\n[${note}]`, true);
    return { cancelled: false, reason: 'max_iterations' };
  }

  /**
   * The rest of a model turn in order: its text, and its tool calls. Calls in `answered` (and
   * the text before them) were done by an earlier attempt of the run and are skipped. Calls to
   * the client's tools are announced, not run; a turn with any ends the run once its own calls ran.
   */
  private async *runPlan(
    plan: TurnSegment[],
    answered: Set<string | undefined>,
    envelope: EventEnvelope,
    context: ExecutionContext,
    tally: Tally,
    add: AddMessage,
  ): AsyncGenerator<ExecutionEvent, 'continue' | Outcome> {
    const from = plan.findLastIndex((s) => s.type === 'tool_call' && answered.has(s.call.id)) + 1;
    for (const segment of plan.slice(from)) {
      if (segment.type === 'text') {
        yield new TextEvent(envelope, segment.text, false);
        continue;
      }
      const clientTool = this.clientToolOf(segment.call.name);
      if (clientTool) {
        yield new ToolCallEvent(envelope, clientTool, segment.call.arguments, segment.call.id, true);
        continue;
      }
      const outcome = yield* this.limitedTool(segment.call, envelope, context, tally.toolCalls++, add);
      if (outcome !== 'continue') return outcome;
    }
    if (plan.some((s) => s.type === 'tool_call' && this.clientToolOf(s.call.name))) {
      // The client runs its tools and sends their results in its next request: this run's part is over.
      yield new TextEvent(envelope, '', true);
      return { cancelled: false, reason: 'tool_calls' };
    }
    return 'continue';
  }

  /** The client's tool a call names (by its name, or its spelling on the wire), if it is one. */
  private clientToolOf(name: string): string | undefined {
    if (this.clientTools.size === 0 || this.dispatcher.get(name)) return undefined;
    if (this.clientTools.has(name)) return name;
    return [...this.clientTools.keys()].find((client) => wireToolName(client) === name);
  }

  /** Runs a call unless the per-turn limit is spent; the loop ends when it is, or on cancel/reject. */
  private async *limitedTool(
    call: ToolCallRequest,
    envelope: EventEnvelope,
    context: ExecutionContext,
    used: number,
    add: AddMessage,
  ): AsyncGenerator<ExecutionEvent, 'continue' | Outcome> {
    const { config } = this;
    if (used >= config.maxToolCallsPerTurn) {
      const note = `Tool-call limit of ${config.maxToolCallsPerTurn} per turn reached; ${call.name} was not run.`;
      const shown = [new TextEvent(envelope, `\n[${note}]`, true)];
      const message: ChatMessage = { role: 'tool', name: call.name, toolCallId: call.id, content: JSON.stringify({ success: false, error: note }) };
      await add(message, { replay: shown.map((e) => e.toDict()), end: 'tool_call_limit' });
      yield* shown;
      return { cancelled: false, reason: 'tool_call_limit' };
    }
    const outcome = yield* this.runTool(call, envelope, context, add);
    if (outcome === 'stop') return { cancelled: true, reason: context.signal.aborted ? 'cancelled' : 'rejected' };
    if (outcome === 'timeout') return { cancelled: true, reason: 'timeout' };
    return 'continue';
  }

  /** Runs one tool call and adds its message; returns 'stop' when the run must end ('timeout': its approval expired unanswered). */
  private async *runTool(requested: ToolCallRequest, envelope: EventEnvelope, context: ExecutionContext, add: AddMessage): AsyncGenerator<ExecutionEvent, 'done' | 'stop' | 'timeout'> {
    const tool = this.dispatcher.get(requested.name);
    // Events and the history name a tool as it is called (`server.tool`), whichever spelling the model used.
    const call = tool && tool.name !== requested.name ? { ...requested, name: tool.name } : requested;
    yield new ToolCallEvent(envelope, call.name, call.arguments, call.id);
    const { hitl, approvalPolicy } = this.config;
    const hash = argsHash(call.arguments);
    const sensitive = !!tool && (tool.sensitive === true || tool.requiresApproval?.(call.arguments) === true);
    // Arguments that fail the tool's schema are refused without asking anybody to approve them.
    const valid = !!tool && this.dispatcher.check(call) === null;
    if (tool && valid && hitl && (approvalPolicy ? approvalPolicy(call.name, call.arguments, sensitive) : sensitive)) {
      // Bound to the arguments: a call id reused with other arguments is asked about anew.
      const requestId = approvalRequestId(envelope.runId, call.id, hash);
      const action = { name: call.name, args: call.arguments, description: tool.description };
      // The deadline is taken before the request is recorded, so a client's countdown never promises more time than there is.
      const expiresAt = hitl.timeoutMs === undefined ? undefined : Date.now() + hitl.timeoutMs;
      const mode = hitl.open ? await hitl.open({ requestId, runId: envelope.runId, sessionId: envelope.sessionId, action, argsHash: hash, toolCallId: call.id, ...(expiresAt === undefined ? {} : { expiresAt }) }) : 'ask';
      if (mode !== 'approved') {
        if (mode === 'ask') yield new HitlRequestEvent(envelope, requestId, action, undefined, expiresAt === undefined ? undefined : new Date(expiresAt).toISOString());
        const decision = await hitl.requestApproval(action, envelope.sessionId, context.signal, requestId);
        if (context.signal.aborted) {
          yield new ToolResultEvent(envelope, call.id, { error: 'Cancelled' }, 'cancelled');
          return 'stop';
        }
        if (decision.type === 'reject' && decision.tellModel) {
          const refused = new ToolResultEvent(envelope, call.id, { error: decision.message ?? 'Rejected' }, 'rejected');
          await add({ role: 'tool', name: call.name, toolCallId: call.id, content: JSON.stringify({ success: false, error: decision.message ?? 'Rejected' }) }, { replay: [refused.toDict()] });
          yield refused;
          return 'done';
        }
        if (decision.type === 'reject' && decision.timedOut) {
          yield new ToolResultEvent(envelope, call.id, { error: decision.message ?? 'No decision in time' }, 'timeout');
          return 'timeout';
        }
        if (decision.type === 'reject') {
          yield new ToolResultEvent(envelope, call.id, { error: decision.message ?? 'Rejected by user' }, 'rejected');
          return 'stop';
        }
      }
    }
    const extra: ExecutionEvent[] = [];
    const live = new LiveEvents();
    const { elicitation } = this.config;
    const ctx: ToolContext = {
      caller: context.caller,
      sessionId: envelope.sessionId,
      runId: envelope.runId,
      toolCallId: call.id,
      signal: context.signal,
      emit: (build) => extra.push(build(envelope)),
      ...(elicitation
        ? {
            elicit: (prompt, signal) =>
              elicitation.ask(prompt, { runId: envelope.runId, sessionId: envelope.sessionId, toolCallId: call.id, emit: (build) => live.push(build(envelope)) }, signal),
          }
        : {}),
    };
    // A call with side effects is recorded before it runs; one an earlier attempt started and
    // never finished is not run blindly again.
    const once = tool && context.journal && !isReadOnlyCall(tool, call.arguments) ? await context.journal.intend(call, hash) : 'new';
    // What the call asks the person while it runs goes out while it runs.
    const result = once === 'interrupted' && !tool?.idempotent ? interruptedResult(call.name) : ((yield* live.until(this.callTool(call, ctx))) as Omit<ToolResult, 'status'> & { status?: ToolResultStatus });
    if (context.signal.aborted) {
      yield* extra;
      yield new ToolResultEvent(envelope, call.id, { error: 'Cancelled' }, 'cancelled');
      return 'stop';
    }
    const status = result.status ?? (result.success ? 'success' : 'error');
    const payload = result.success ? result.output : { success: false, error: result.error, ...(result.output ? { details: result.output } : {}) };
    // Every tool's result passes here, so one cap keeps the event, the Redis log, MySQL and the prompt bounded.
    const maxBytes = this.config.toolResultMaxBytes ?? DEFAULT_TOOL_RESULT_MAX_BYTES;
    const { result: shown, content } = capToolOutput(payload, maxBytes);
    const events = [...extra, new ToolResultEvent(envelope, call.id, shown, status, capToolContent(result.content, maxBytes))];
    await add({ role: 'tool', name: call.name, toolCallId: call.id, content }, { replay: events.map((e) => e.toDict()) });
    yield* events;
    return 'done';
  }
}

type Outcome = { cancelled: boolean; reason?: string };
type Tally = { iterations: number; toolCalls: number };
type AddMessage = (message: ChatMessage, step?: Omit<JournalStep, 'message'>) => Promise<void>;

function interruptedResult(name: string): Omit<ToolResult, 'status'> & { status: ToolResultStatus } {
  return {
    success: false,
    output: null,
    error: `The worker running ${name} stopped before its result was recorded: whether it took effect is unknown. Check before calling it again.`,
    status: 'interrupted',
  };
}

/** What the person is told of a failure (an LLM's address stays out: the worker's log has it). */
function describeError(err: unknown): string {
  if (err instanceof LlmRequestError) return err.publicMessage;
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** The error a run ends with when a budget is spent: which budget, and when it starts again (`retry_after`). */
export function budgetError(envelope: EventEnvelope, exhausted: BudgetExhaustion): ErrorEvent {
  const retryAfter = exhausted.resets_at ? Math.max(1, Math.ceil((Date.parse(exhausted.resets_at) - Date.now()) / 1000)) : undefined;
  return new ErrorEvent(envelope, describeBudget(exhausted), false, 'budget_exhausted', undefined, retryAfter);
}

/** "Your organisation's daily token budget is spent (1000 of 1000); it starts again at …" */
export function describeBudget(b: BudgetExhaustion): string {
  const whose = b.scope === 'tenant' ? "Your organisation's" : b.scope === 'user' ? 'Your' : "This run's";
  const period = b.period === 'day' ? 'daily ' : b.period === 'month' ? 'monthly ' : '';
  const what = b.metric === 'tokens' ? 'token' : 'spending';
  const amount = b.metric === 'tokens' ? `${b.spent} of ${b.limit} tokens` : `${b.spent} of ${b.limit} ${b.currency ?? ''}`.trimEnd();
  return `${whose} ${period}${what} budget is spent (${amount})${b.resets_at ? `; it starts again at ${b.resets_at}` : ''}`;
}
