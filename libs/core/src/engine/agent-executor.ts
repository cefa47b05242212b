import {
  DoneEvent,
  ErrorEvent,
  type EventEnvelope,
  type ExecutionEvent,
  HitlRequestEvent,
  TextEvent,
  ToolCallEvent,
  ToolResultEvent,
} from '../events/execution-event.js';
import type { ChatMessage, ToolCallRequest } from '../llm/chat-model.js';
import type { Caller } from '../session/caller.js';
import { ToolDispatcher } from '../tools/tool-dispatcher.js';
import { capToolOutput, DEFAULT_TOOL_RESULT_MAX_BYTES } from '../tools/tool-output-cap.js';
import type { ToolContext, ToolResult } from '../tools/tool.js';
import type { AgentConfig } from './agent-config.js';
import { TextToolCalls } from './text-tool-calls.js';
import { composeToolCall, type ModelCallState, type ToolCallHandler } from './agent-middleware.js';

export interface ExecutionContext {
  runId: string;
  caller: Caller;
  /** The conversation before this turn, oldest first. */
  history: ChatMessage[];
  /** Cancels the run: the model stream and any tool in flight stop. */
  signal: AbortSignal;
  /** Receives each message the run adds to the conversation, in order. */
  onMessage?: (message: ChatMessage) => void;
}

/**
 * Runs one turn of an agent: streams the model, executes tool calls, loops until the
 * model answers without tools. Never throws: failures become an `error` event, and
 * every run ends with exactly one `done`.
 */
export class AgentExecutor {
  private readonly dispatcher: ToolDispatcher;
  private readonly callTool: ToolCallHandler;

  constructor(readonly config: AgentConfig) {
    this.dispatcher = new ToolDispatcher(config.tools, config.toolTimeoutMs);
    this.callTool = composeToolCall(config.middleware, (call, ctx) => this.dispatcher.dispatch(call, ctx));
  }

  async *execute(userInput: string, sessionId: string, context: ExecutionContext): AsyncGenerator<ExecutionEvent> {
    const envelope: EventEnvelope = { sessionId, runId: context.runId };
    let cancelled = false;
    let reason: string | undefined;
    try {
      const outcome = yield* this.loop(userInput, envelope, context);
      cancelled = outcome.cancelled;
      reason = outcome.reason;
    } catch (err) {
      if (context.signal.aborted) {
        cancelled = true;
        reason = 'cancelled';
      } else {
        yield new ErrorEvent(envelope, describeError(err), false, 'run_failed');
      }
    }
    yield new DoneEvent(envelope, cancelled, reason);
  }

  private async *loop(
    userInput: string,
    envelope: EventEnvelope,
    context: ExecutionContext,
  ): AsyncGenerator<ExecutionEvent, { cancelled: boolean; reason?: string }> {
    const { config } = this;
    const messages: ChatMessage[] = [{ role: 'system', content: config.systemPrompt }, ...context.history];
    const add = (message: ChatMessage) => {
      messages.push(message);
      context.onMessage?.(message);
    };
    messages.push({ role: 'user', content: userInput });
    let toolCallsUsed = 0;

    for (let iteration = 1; iteration <= config.maxIterations; iteration++) {
      const state: ModelCallState = {
        sessionId: envelope.sessionId,
        runId: envelope.runId,
        iteration,
        messages: [...messages],
        tools: this.dispatcher.specs(),
      };
      for (const mw of config.middleware) await mw.beforeModel?.(state);
      if (context.signal.aborted) return { cancelled: true, reason: 'cancelled' };

      let text = '';
      let toolCalls: ToolCallRequest[] = [];
      let finishReason = 'stop';
      let callNumber = 0;
      const turn = new TextToolCalls({
        parseTags: config.enableToolActionParsing !== false,
        parseJson: config.enableJsonToolCalls !== false,
        newId: () => `${envelope.runId.slice(0, 8)}-${iteration}-${++callNumber}`,
      });
      for await (const chunk of config.model.stream({ messages: state.messages, tools: state.tools, signal: context.signal })) {
        if (context.signal.aborted) return { cancelled: true, reason: 'cancelled' };
        if (chunk.type === 'text' && chunk.text) {
          text += chunk.text;
          const now = turn.push(chunk.text);
          if (now) yield new TextEvent(envelope, now, false);
        } else if (chunk.type === 'tool_calls') {
          toolCalls = chunk.calls;
        } else if (chunk.type === 'finish') {
          finishReason = chunk.reason;
        }
      }
      if (context.signal.aborted) return { cancelled: true, reason: 'cancelled' };
      // Native tool calls win; otherwise calls written in the text run in order with the text between them.
      const rest = turn.end(toolCalls.length > 0);
      const textCalls = rest.flatMap((s) => (s.type === 'tool_call' ? [s.call] : []));
      if (toolCalls.length === 0) toolCalls = textCalls;
      for (const mw of config.middleware) await mw.afterModel?.(state, { text, toolCalls, finishReason });

      if (toolCalls.length === 0) {
        for (const segment of rest) if (segment.type === 'text') yield new TextEvent(envelope, segment.text, false);
        yield new TextEvent(envelope, '', true);
        add({ role: 'assistant', content: text });
        return { cancelled: false };
      }

      add({ role: 'assistant', content: text, toolCalls });
      if (textCalls.length > 0) {
        for (const segment of rest) {
          if (segment.type === 'text') {
            yield new TextEvent(envelope, segment.text, false);
            continue;
          }
          const outcome = yield* this.limitedTool(segment.call, envelope, context, toolCallsUsed++, add);
          if (outcome !== 'continue') return outcome;
        }
        continue;
      }
      for (const segment of rest) if (segment.type === 'text') yield new TextEvent(envelope, segment.text, false);
      for (const call of toolCalls) {
        const outcome = yield* this.limitedTool(call, envelope, context, toolCallsUsed++, add);
        if (outcome !== 'continue') return outcome;
      }
    }
    const note = `Stopped after ${config.maxIterations} iterations without a final answer.`;
    yield new TextEvent(envelope, `\n[${note}]`, true);
    return { cancelled: false, reason: 'max_iterations' };
  }

  /** Runs a call unless the per-turn limit is spent; the loop ends when it is, or on cancel/reject. */
  private async *limitedTool(
    call: ToolCallRequest,
    envelope: EventEnvelope,
    context: ExecutionContext,
    used: number,
    add: (m: ChatMessage) => void,
  ): AsyncGenerator<ExecutionEvent, 'continue' | { cancelled: boolean; reason?: string }> {
    const { config } = this;
    if (used >= config.maxToolCallsPerTurn) {
      const note = `Tool-call limit of ${config.maxToolCallsPerTurn} per turn reached; ${call.name} was not run.`;
      add({ role: 'tool', name: call.name, toolCallId: call.id, content: JSON.stringify({ success: false, error: note }) });
      yield new TextEvent(envelope, `\n[${note}]`, true);
      return { cancelled: false, reason: 'tool_call_limit' };
    }
    const outcome = yield* this.runTool(call, envelope, context);
    if (outcome === 'stop') return { cancelled: true, reason: context.signal.aborted ? 'cancelled' : 'rejected' };
    add(outcome);
    return 'continue';
  }
  /** Runs one tool call; returns the tool message, or 'stop' when the run must end. */
  private async *runTool(call: ToolCallRequest, envelope: EventEnvelope, context: ExecutionContext): AsyncGenerator<ExecutionEvent, ChatMessage | 'stop'> {
    yield new ToolCallEvent(envelope, call.name, call.arguments, call.id);
    const tool = this.dispatcher.get(call.name);
    const { hitl, approvalPolicy } = this.config;
    const sensitive = !!tool && (tool.sensitive === true || tool.requiresApproval?.(call.arguments) === true);
    if (tool && hitl && (approvalPolicy ? approvalPolicy(call.name, call.arguments, sensitive) : sensitive)) {
      const requestId = `${envelope.runId}:${call.id}`;
      const action = { name: call.name, args: call.arguments, description: tool.description };
      const mode = hitl.open ? await hitl.open({ requestId, runId: envelope.runId, sessionId: envelope.sessionId, action }) : 'ask';
      if (mode === 'ask') {
        yield new HitlRequestEvent(envelope, requestId, action);
        const decision = await hitl.requestApproval(action, envelope.sessionId, context.signal, requestId);
        if (context.signal.aborted) {
          yield new ToolResultEvent(envelope, call.id, { error: 'Cancelled' }, 'cancelled');
          return 'stop';
        }
        if (decision.type === 'reject') {
          yield new ToolResultEvent(envelope, call.id, { error: decision.message ?? 'Rejected by user' }, 'rejected');
          return 'stop';
        }
      }
    }
    const extra: ExecutionEvent[] = [];
    const ctx: ToolContext = {
      caller: context.caller,
      sessionId: envelope.sessionId,
      runId: envelope.runId,
      toolCallId: call.id,
      signal: context.signal,
      emit: (build) => extra.push(build(envelope)),
    };
    const result = (await this.callTool(call, ctx)) as ToolResult & { status?: ToolResultEvent['status'] };
    yield* extra;
    if (context.signal.aborted) {
      yield new ToolResultEvent(envelope, call.id, { error: 'Cancelled' }, 'cancelled');
      return 'stop';
    }
    const status = result.status ?? (result.success ? 'success' : 'error');
    const payload = result.success ? result.output : { success: false, error: result.error, ...(result.output ? { details: result.output } : {}) };
    // Every tool's result passes here, so one cap keeps the event, the Redis log, MySQL and the prompt bounded.
    const { result: shown, content } = capToolOutput(payload, this.config.toolResultMaxBytes ?? DEFAULT_TOOL_RESULT_MAX_BYTES);
    yield new ToolResultEvent(envelope, call.id, shown, status);
    return { role: 'tool', name: call.name, toolCallId: call.id, content };
  }
}

function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
