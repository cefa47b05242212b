import type { ChatMessage, ToolSpec } from '#core/llm/chat-model.js';
import { ApiError } from '../../common/api-error.js';
import type { HitlDecisionType } from '../../runs/run-control.service.js';
import { parseClientTools } from '../openai-wire.js';

/** The last event of a DataAgent run a client has: the run and its `seq`. */
export interface LogCursor {
  runId: string;
  afterSeq: number;
}

export interface ApprovalAnswer {
  requestId: string;
  decision: HitlDecisionType;
  message: string;
}

/** What an AG-UI run asks of the thread. */
export type ThreadRequest =
  /** A new turn: the last message is the person's. `history` is what came before it (kept only by a new thread). */
  | { kind: 'turn'; message: string; history: ChatMessage[] }
  /** The results of the client's own tools the last turn called: the next turn starts from them. */
  | { kind: 'tool_results'; toolResults: ChatMessage[] }
  /** The answers to the interrupts that ended the last AG-UI run (AG-UI `resume`). */
  | { kind: 'resume'; answers: ApprovalAnswer[]; cursor?: LogCursor }
  /** No new input: go on reading the thread's run after the client's cursor (a reconnect). */
  | { kind: 'reattach'; cursor?: LogCursor };

export interface RunAgentRequest {
  threadId: string;
  /** The client's id of this AG-UI run, echoed on RUN_STARTED and RUN_FINISHED. */
  runId: string;
  request: ThreadRequest;
  clientTools: ToolSpec[];
}

const THREAD_ID = /^[A-Za-z0-9_-]{1,64}$/;

type AgUiMessage = { id?: unknown; role?: unknown; content?: unknown; toolCalls?: unknown; toolCallId?: unknown; metadata?: unknown };

/**
 * Reads an AG-UI `RunAgentInput` as HttpAgent sends it (the whole conversation each time):
 * `resume` answers approvals; trailing `tool` messages the client wrote are its tools' results;
 * a last `user` message is a new turn; anything else (the client's own copy of the answer last,
 * or `forwardedProps.dataagent.after_seq`) re-attaches to the thread's run after the cursor the
 * messages carry (`metadata.dataagent`, which every event put there).
 * @throws ApiError 422 naming the field at fault; 400 for tools the assistant cannot take.
 */
export function readRunAgentInput(body: unknown): RunAgentRequest {
  const input = (body ?? {}) as { threadId?: unknown; runId?: unknown; messages?: unknown; tools?: unknown; resume?: unknown; forwardedProps?: unknown };
  if (typeof input.threadId !== 'string' || !THREAD_ID.test(input.threadId)) throw invalid('threadId', 'must be the thread id: 1-64 letters, digits, _ or -');
  if (typeof input.runId !== 'string' || input.runId === '' || input.runId.length > 128) throw invalid('runId', 'must be the run id (a string of 1-128 characters)');
  if (!Array.isArray(input.messages)) throw invalid('messages', 'must be a list of AG-UI messages');
  const messages = input.messages as AgUiMessage[];
  const clientTools = parseClientTools(toolsOf(input.tools), undefined);
  const named = explicitCursor(input.forwardedProps);
  const cursor = named ?? cursorOf(messages);
  const answers = answersOf(input.resume);
  if (answers.length > 0) return { threadId: input.threadId, runId: input.runId, clientTools, request: { kind: 'resume', answers, ...(cursor ? { cursor } : {}) } };
  const forced = named !== undefined;
  const last = messages.at(-1);
  let request: ThreadRequest;
  if (!forced && last?.role === 'user') request = { kind: 'turn', message: userText(last, messages.length - 1), history: historyOf(messages.slice(0, -1)) };
  else if (!forced && last?.role === 'tool' && !markOf(last)) request = { kind: 'tool_results', toolResults: toolResultsOf(messages) };
  else request = { kind: 'reattach', ...(cursor ? { cursor } : {}) };
  return { threadId: input.threadId, runId: input.runId, clientTools, request };
}

/** AG-UI tools (`{name, description, parameters}`) as the function tools the OpenAI door takes, to share its checks. */
function toolsOf(raw: unknown): unknown {
  if (!Array.isArray(raw)) return raw;
  return raw.map((t) => {
    const { name, description, parameters } = (t ?? {}) as { name?: unknown; description?: unknown; parameters?: unknown };
    return { type: 'function', function: { name, description, ...(parameters === undefined ? {} : { parameters }) } };
  });
}

function answersOf(raw: unknown): ApprovalAnswer[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalid('resume', 'must be a list of resume entries');
  return raw.map((entry, i) => {
    const { interruptId, status, payload } = (entry ?? {}) as { interruptId?: unknown; status?: unknown; payload?: unknown };
    const field = `resume[${i}]`;
    if (typeof interruptId !== 'string' || interruptId === '') throw invalid(`${field}.interruptId`, 'must be the id of the interrupt it answers');
    const { approved, decision, message } = (payload ?? {}) as { approved?: unknown; decision?: unknown; message?: unknown };
    const note = typeof message === 'string' ? message : '';
    if (status === 'cancelled') return { requestId: interruptId, decision: 'reject', message: note };
    if (status !== 'resolved') throw invalid(`${field}.status`, 'must be "resolved" or "cancelled"');
    if (typeof approved === 'boolean') return { requestId: interruptId, decision: approved ? 'approve' : 'reject', message: note };
    if (decision === 'approve' || decision === 'reject' || decision === 'approve_all') return { requestId: interruptId, decision, message: note };
    throw invalid(`${field}.payload`, 'must be {approved: true|false, message?} or {decision: "approve"|"reject"|"approve_all", message?}');
  });
}

/** `forwardedProps.dataagent`: `{run_id?, after_seq}` names the cursor outright. */
function explicitCursor(raw: unknown): LogCursor | undefined {
  const props = (raw as { dataagent?: { run_id?: unknown; after_seq?: unknown } } | null)?.dataagent;
  if (props === undefined || props === null || props.after_seq === undefined) return undefined;
  if (typeof props.after_seq !== 'number' || !Number.isInteger(props.after_seq) || props.after_seq < 0) throw invalid('forwardedProps.dataagent.after_seq', 'must be a whole number of 0 or more');
  if (props.run_id !== undefined && typeof props.run_id !== 'string') throw invalid('forwardedProps.dataagent.run_id', 'must be a run id');
  return { runId: typeof props.run_id === 'string' ? props.run_id : '', afterSeq: props.after_seq };
}

type Mark = { run_id: string; seq: number };

function markOf(holder: { metadata?: unknown }): Mark | undefined {
  const mark = (holder.metadata as { dataagent?: { run_id?: unknown; seq?: unknown } } | undefined)?.dataagent;
  return typeof mark?.run_id === 'string' && typeof mark.seq === 'number' ? { run_id: mark.run_id, seq: mark.seq } : undefined;
}

/**
 * The cursor the conversation carries: HttpAgent folds each event's `metadata` into the message
 * (or tool call) it builds, so the latest run marked there, and the highest `seq` of it, is the
 * last event the client applied.
 */
export function cursorOf(messages: AgUiMessage[]): LogCursor | undefined {
  const marks: Mark[] = [];
  for (const m of messages) {
    if (!m || typeof m !== 'object') continue;
    const own = markOf(m);
    if (own) marks.push(own);
    if (Array.isArray(m.toolCalls)) for (const call of m.toolCalls as Array<{ metadata?: unknown }>) {
      const mark = call && typeof call === 'object' ? markOf(call) : undefined;
      if (mark) marks.push(mark);
    }
  }
  const latest = marks.at(-1);
  if (!latest) return undefined;
  return { runId: latest.run_id, afterSeq: Math.max(...marks.filter((m) => m.run_id === latest.run_id).map((m) => m.seq)) };
}

/** The results of the client's tools: the trailing `tool` messages it wrote (no mark: the assistant's own results came from the log), answering calls of the assistant message before them. */
function toolResultsOf(messages: AgUiMessage[]): ChatMessage[] {
  const first = messages.findLastIndex((m) => m?.role !== 'tool') + 1;
  const caller = messages[first - 1];
  const calls = new Map<string, string>();
  if (caller?.role === 'assistant' && Array.isArray(caller.toolCalls)) {
    for (const call of caller.toolCalls as Array<{ id?: unknown; function?: { name?: unknown } }>) {
      if (typeof call?.id === 'string' && typeof call.function?.name === 'string') calls.set(call.id, call.function.name);
    }
  }
  const results: ChatMessage[] = [];
  messages.slice(first).forEach((m, j) => {
    if (markOf(m)) return;
    const i = first + j;
    const id = m.toolCallId;
    if (typeof id !== 'string' || !calls.has(id)) throw invalid(`messages[${i}].toolCallId`, 'must answer a tool call of the assistant message before it');
    results.push({ role: 'tool', toolCallId: id, name: calls.get(id)!, content: textOf(m.content, i) });
  });
  return results;
}

/** The text messages before the new one, for a thread DataAgent does not hold yet. */
function historyOf(messages: AgUiMessage[]): ChatMessage[] {
  const history: ChatMessage[] = [];
  messages.forEach((m, i) => {
    if (m?.role === 'user') history.push({ role: 'user', content: textOf(m.content, i) });
    else if (m?.role === 'system' || m?.role === 'developer') history.push({ role: 'system', content: textOf(m.content, i) });
    else if (m?.role === 'assistant' && typeof m.content === 'string' && m.content !== '' && !Array.isArray(m.toolCalls)) history.push({ role: 'assistant', content: m.content });
  });
  return history;
}

function userText(message: AgUiMessage, i: number): string {
  const text = textOf(message.content, i);
  if (text.trim() === '') throw invalid(`messages[${i}].content`, 'the last user message has no text');
  return text;
}

/** String content, or the text of content parts (other parts are not taken). */
function textOf(content: unknown, i: number): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, j) => {
        const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
        if (type !== 'text' || typeof text !== 'string') throw invalid(`messages[${i}].content[${j}]`, 'only text parts are taken');
        return text;
      })
      .join('');
  }
  throw invalid(`messages[${i}].content`, 'must be a string or a list of text parts');
}

const invalid = ApiError.invalidField;
