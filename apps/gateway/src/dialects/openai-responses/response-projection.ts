import type { EventDict, RunUsage } from '#core/events/execution-event.js';
import { wireArguments } from '../openai-wire.js';
import { toolCallOfRequest } from '#core/hitl/approval-request-id.js';

/**
 * A response is a window of one run's event log: the events after `afterSeq`, up to the run's
 * `done` or the first approval request (`hitl_request`) after it, where the response ends and
 * the next one (answering the approval) begins. A run without approvals is one response.
 */
export interface ResponseWindow {
  runId: string;
  /** The seq of the `hitl_request` the previous response of the run ended at; 0 for the run's first. */
  afterSeq: number;
}

const RESPONSE_ID = /^resp_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:_(\d{1,10}))?$/;

/** `resp_<run>` for a run's first response, `resp_<run>_<seq>` for the one after the approval request at `seq`. */
export function responseIdOf(window: ResponseWindow): string {
  return window.afterSeq === 0 ? `resp_${window.runId}` : `resp_${window.runId}_${window.afterSeq}`;
}

/** The window a response id names, or undefined when it names none. */
export function windowOf(responseId: string): ResponseWindow | undefined {
  const match = RESPONSE_ID.exec(responseId);
  if (!match) return undefined;
  const afterSeq = match[2] === undefined ? 0 : Number(match[2]);
  return afterSeq === 0 && match[2] !== undefined ? undefined : { runId: match[1]!, afterSeq };
}

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

/** The label of the "server" a tool of the assistant runs on: an MCP server's name, or `dataagent` for its own tools. */
export const OWN_TOOLS_LABEL = 'dataagent';

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
}

export type OutputItem =
  | { type: 'message'; id: string; status: 'in_progress' | 'completed'; role: 'assistant'; content: OutputText[] }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: 'in_progress' | 'completed' }
  | { type: 'mcp_call'; id: string; server_label: string; name: string; arguments: string; output: string | null; error: string | null; status: 'in_progress' | 'completed' | 'failed'; approval_request_id?: string }
  | { type: 'mcp_approval_request'; id: string; server_label: string; name: string; arguments: string };

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** DataAgent's own: what the run's model calls cost, exact, and its currency. */
  cost?: string;
  currency?: string;
}

/** A response object, as OpenAI's Responses API shows one (the fields DataAgent can say). */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  background: boolean | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  instructions: null;
  max_output_tokens: null;
  model: string;
  output: OutputItem[];
  output_text: string;
  parallel_tool_calls: true;
  previous_response_id: null;
  temperature: null;
  tool_choice: 'auto';
  tools: never[];
  top_p: null;
  usage: ResponseUsage | null;
  metadata: Record<string, string>;
}

/** One server-sent event of a streamed response: its `type`, its place in the stream, its fields. */
export type ResponseStreamEvent = { type: string; sequence_number: number } & Record<string, unknown>;

/** How a run's done (and a fatal error before it) ends its last response. */
const INCOMPLETE_REASONS = new Set(['max_iterations', 'tool_call_limit']);

/**
 * Projects a run's events onto one response of OpenAI's Responses API. Fed the run's events
 * from its first (the ones before the window teach it the names of tools and approvals), it
 * yields the window's stream events, numbered from 0 in order: the same log always yields the
 * same numbered events, so a client resumes after the last `sequence_number` it saw with no gap
 * and no duplicate. Text is a `message` item, a call to the client's function tool a
 * `function_call` item, a tool the assistant ran an `mcp_call` item (with its output), an
 * approval an `mcp_approval_request` item that ends the response.
 */
export class ResponseProjection {
  private readonly id: string;
  private next = 0;
  private createdAt?: number;
  private status: ResponseStatus = 'queued';
  private started = false;
  private ended = false;
  private readonly output: OutputItem[] = [];
  private openText?: { index: number; item: Extract<OutputItem, { type: 'message' }> };
  private failure?: { code: string; message: string };
  private incomplete?: { reason: string };
  private usage?: ResponseUsage;
  /** Every tool call of the run so far (the window's and the ones before it): its name and arguments. */
  private readonly calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  /** Tool call id → the approval request that asked about it. */
  private readonly approvals = new Map<string, string>();

  constructor(
    private readonly window: ResponseWindow,
    private readonly model: string,
  ) {
    this.id = responseIdOf(window);
  }

  /** The response has ended: its run is done, or it asked for an approval. */
  get isEnded(): boolean {
    return this.ended;
  }

  /** The stream events `event` adds to the response (none for events outside its window). */
  eventsOf(event: EventDict): ResponseStreamEvent[] {
    if (event.event_type === 'tool_call') this.calls.set(event.tool_call_id, { name: event.tool_name, args: event.tool_args });
    if (event.event_type === 'hitl_request') this.approvals.set(toolCallOfRequest(event.request_id), event.request_id);
    if (this.ended || event.run_id !== this.window.runId) return [];
    if (event.seq <= this.window.afterSeq) {
      // The response opens where the approval it follows was asked.
      if (event.seq === this.window.afterSeq) this.createdAt = seconds(event.timestamp);
      return [];
    }
    const out: ResponseStreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      this.createdAt ??= seconds(event.timestamp);
      if (event.event_type !== 'run_queued') this.status = 'in_progress';
      out.push(this.emit('response.created', { response: this.snapshot() }));
      if (this.status === 'in_progress') out.push(this.emit('response.in_progress', { response: this.snapshot() }));
    }
    switch (event.event_type) {
      case 'run_started':
        if (this.status === 'queued') {
          this.status = 'in_progress';
          out.push(this.emit('response.in_progress', { response: this.snapshot() }));
        }
        break;
      case 'text':
        if (event.content) out.push(...this.addText(event.content, event.seq));
        break;
      case 'tool_call':
        out.push(...this.closeText());
        // The assistant's own calls show with their result (mcp_call); the client's are for it to run.
        if (event.client) {
          const args = wireArguments(event.tool_args);
          out.push(...this.addItem({ type: 'function_call', id: `fc_${event.tool_call_id}`, call_id: event.tool_call_id, name: event.tool_name, arguments: args, status: 'completed' }, (item_id, output_index) => [
            this.emit('response.function_call_arguments.delta', { item_id, output_index, delta: args }),
            this.emit('response.function_call_arguments.done', { item_id, output_index, name: event.tool_name, arguments: args }),
          ]));
        }
        break;
      case 'tool_result': {
        out.push(...this.closeText());
        const call = this.calls.get(event.tool_call_id);
        const { server_label, name } = serverAndName(call?.name ?? 'tool');
        const failed = event.status !== 'success';
        const approval = this.approvals.get(event.tool_call_id);
        const item: OutputItem = {
          type: 'mcp_call',
          id: `mcp_${event.tool_call_id}`,
          server_label,
          name,
          arguments: JSON.stringify(call?.args ?? {}),
          output: failed ? null : asText(event.content ?? event.result),
          error: failed ? `${event.status}: ${errorText(event.result)}` : null,
          status: failed ? 'failed' : 'completed',
          ...(approval ? { approval_request_id: approval } : {}),
        };
        out.push(...this.addItem(item, (item_id, output_index) => [this.emit(failed ? 'response.mcp_call.failed' : 'response.mcp_call.completed', { item_id, output_index })]));
        break;
      }
      case 'hitl_request': {
        out.push(...this.closeText());
        const { server_label, name } = serverAndName(event.action_request.name);
        out.push(...this.addItem({ type: 'mcp_approval_request', id: event.request_id, server_label, name, arguments: JSON.stringify(event.action_request.args ?? {}) }, () => []));
        // The run waits for a person: this response is complete, the next one answers the request.
        out.push(...this.end('completed'));
        break;
      }
      case 'error':
        if (!event.recoverable) this.failure = { code: event.error_code ?? 'run_failed', message: event.error };
        break;
      case 'done':
        out.push(...this.closeText());
        if (event.usage) this.usage = usageOf(event.usage);
        if (!event.cancelled && !this.failure && event.reason && INCOMPLETE_REASONS.has(event.reason)) this.incomplete = { reason: event.reason };
        out.push(...this.end(event.cancelled ? 'cancelled' : this.failure ? 'failed' : this.incomplete ? 'incomplete' : 'completed'));
        break;
      default:
        break;
    }
    return out;
  }

  /** The response as it stands. */
  snapshot(): ResponseObject {
    const output = structuredClone(this.output);
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt ?? 0,
      status: this.status,
      background: null,
      error: this.status === 'failed' ? (this.failure ?? null) : null,
      incomplete_details: this.status === 'incomplete' ? (this.incomplete ?? null) : this.status === 'cancelled' ? { reason: 'cancelled' } : null,
      instructions: null,
      max_output_tokens: null,
      model: this.model,
      output,
      output_text: output.flatMap((item) => (item.type === 'message' ? item.content.map((c) => c.text) : [])).join(''),
      parallel_tool_calls: true,
      previous_response_id: null,
      temperature: null,
      tool_choice: 'auto',
      tools: [],
      top_p: null,
      usage: this.usage ?? null,
      metadata: {},
    };
  }

  private emit(type: string, fields: Record<string, unknown>): ResponseStreamEvent {
    return { type, sequence_number: this.next++, ...fields };
  }

  private addText(delta: string, seq: number): ResponseStreamEvent[] {
    const out: ResponseStreamEvent[] = [];
    if (!this.openText) {
      const item: Extract<OutputItem, { type: 'message' }> = { type: 'message', id: `msg_${this.window.runId}_${seq}`, status: 'in_progress', role: 'assistant', content: [] };
      const index = this.output.push(item) - 1;
      this.openText = { index, item };
      out.push(this.emit('response.output_item.added', { output_index: index, item: structuredClone(item) }));
      item.content.push({ type: 'output_text', text: '', annotations: [] });
      out.push(this.emit('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: structuredClone(item.content[0]) }));
    }
    const { index, item } = this.openText;
    item.content[0]!.text += delta;
    out.push(this.emit('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta, logprobs: [] }));
    return out;
  }

  private closeText(): ResponseStreamEvent[] {
    if (!this.openText) return [];
    const { index, item } = this.openText;
    this.openText = undefined;
    item.status = 'completed';
    const part = item.content[0]!;
    return [
      this.emit('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: [] }),
      this.emit('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part: structuredClone(part) }),
      this.emit('response.output_item.done', { output_index: index, item: structuredClone(item) }),
    ];
  }

  /** Adds a finished item: `added` (as it was in progress), what happened in it, `done`. */
  private addItem(item: OutputItem, between: (itemId: string, outputIndex: number) => ResponseStreamEvent[]): ResponseStreamEvent[] {
    const index = this.output.push(item) - 1;
    const opening = { ...item, ...inProgress(item) } as OutputItem;
    return [this.emit('response.output_item.added', { output_index: index, item: opening }), ...between(item.id, index), this.emit('response.output_item.done', { output_index: index, item: structuredClone(item) })];
  }

  private end(status: ResponseStatus): ResponseStreamEvent[] {
    this.status = status;
    this.ended = true;
    // OpenAI's clients know three endings; a cancelled response ends as incomplete, its status says cancelled.
    const type = status === 'completed' ? 'response.completed' : status === 'failed' ? 'response.failed' : 'response.incomplete';
    return [this.emit(type, { response: this.snapshot() })];
  }
}

/** How an item looks while it is being made. */
function inProgress(item: OutputItem): Partial<OutputItem> {
  if (item.type === 'function_call') return { status: 'in_progress', arguments: '' };
  if (item.type === 'mcp_call') return { status: 'in_progress', output: null, error: null };
  return {};
}

/** `server.tool` (an MCP server's tool) is that server's; any other tool is the assistant's own. */
function serverAndName(toolName: string): { server_label: string; name: string } {
  const dot = toolName.indexOf('.');
  return dot > 0 ? { server_label: toolName.slice(0, dot), name: toolName.slice(dot + 1) } : { server_label: OWN_TOOLS_LABEL, name: toolName };
}

function seconds(timestamp: string): number {
  const at = Date.parse(timestamp);
  return Number.isFinite(at) ? Math.floor(at / 1000) : 0;
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

function errorText(result: unknown): string {
  if (typeof result === 'string') return result;
  const error = (result as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : JSON.stringify(result ?? null);
}

function usageOf(usage: RunUsage): ResponseUsage {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
    ...(usage.cost ? { cost: usage.cost, currency: usage.currency } : {}),
  };
}
