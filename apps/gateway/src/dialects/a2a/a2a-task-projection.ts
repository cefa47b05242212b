import type { EventDict, HitlRequestEventDict, RunUsage } from '#core/events/execution-event.js';
import { toolCallOfRequest } from '#core/hitl/approval-request-id.js';

/** A task's state as A2A 1.0's JSON-RPC binding spells it (proto JSON enum names). */
export type A2aTaskState =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_FAILED';

/** A part of a message or an artifact: text, or structured data. */
export type A2aPart = { text: string; mediaType?: string } | { data: Record<string, unknown>; mediaType: 'application/json' };

export interface A2aMessage {
  messageId: string;
  contextId: string;
  taskId: string;
  role: 'ROLE_AGENT' | 'ROLE_USER';
  parts: A2aPart[];
}

export interface A2aTaskStatus {
  state: A2aTaskState;
  message?: A2aMessage;
  timestamp?: string;
}

export interface A2aArtifact {
  artifactId: string;
  name: string;
  parts: A2aPart[];
}

/**
 * `metadata.dataagent.seq`: the run's event the task (or update) stands at, its resume position;
 * `usage`, once the run is done: its tokens and cost.
 */
export interface A2aTask {
  id: string;
  contextId: string;
  status: A2aTaskStatus;
  artifacts: A2aArtifact[];
  metadata: { dataagent: { session_id: string; run_id: string; seq: number; usage?: RunUsage } };
}

export interface A2aStatusUpdate {
  taskId: string;
  contextId: string;
  status: A2aTaskStatus;
  metadata: { dataagent: { seq: number; usage?: RunUsage } };
}

export interface A2aArtifactUpdate {
  taskId: string;
  contextId: string;
  artifact: A2aArtifact;
  append: boolean;
  lastChunk: boolean;
  metadata: { dataagent: { seq: number } };
}

/** One item of a stream (`StreamResponse`): exactly one of its fields. */
export type A2aStreamResponse = { task: A2aTask } | { statusUpdate: A2aStatusUpdate } | { artifactUpdate: A2aArtifactUpdate };

const FINAL_STATES: ReadonlySet<A2aTaskState> = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED']);

/** The artifact that holds the run's answer: every `text` event, appended in order. */
export const ANSWER_ARTIFACT = 'answer';

/**
 * Projects a run's events onto an A2A task, one event at a time: the task is the run (id = run
 * id, contextId = the session's id as its client knows it), its state follows the run (submitted, working, input-required
 * while an approval waits, then completed, canceled or failed), the answer text is one artifact
 * appended chunk by chunk, and each tool call and result is a working status message with a
 * data part. {@link task} is the snapshot at the last event folded in; {@link apply} returns the
 * stream updates an event becomes. The run's log stays the only record: this holds what a
 * snapshot needs, rebuilt from the log on every request.
 */
export class A2aTaskProjection {
  private state: A2aTaskState = 'TASK_STATE_SUBMITTED';
  private statusMessage?: A2aMessage;
  private timestamp?: string;
  private answer = '';
  private answerStarted = false;
  private failure?: string;
  private readonly pending: HitlRequestEventDict[] = [];
  /** The approval asked last, and the done's reason: what a late answer to it is told. */
  private lastAsked?: string;
  private endReason?: string;
  /** The run's usage, once its done is in. */
  private usage?: RunUsage;
  /** Approvals whose call was closed because nobody answered in time (before the run's done, if any, is in). */
  private readonly timedOut = new Set<string>();
  /** The seq of the last event folded in: where a follow continues. */
  lastSeq = 0;

  /**
   * @param taskId the run's id
   * @param sessionId the run's session (stored id)
   * @param contextId the context as its client knows it: the id it chose, or the session's (clientSessionId)
   */
  constructor(
    readonly taskId: string,
    readonly sessionId: string,
    readonly contextId: string = sessionId,
  ) {}

  /** The run has ended: completed, canceled or failed. */
  get final(): boolean {
    return FINAL_STATES.has(this.state);
  }

  /** The task waits for its client (an approval) or has ended: a blocking call answers, a stream closes. */
  get settled(): boolean {
    return this.final || this.state === 'TASK_STATE_INPUT_REQUIRED';
  }

  get taskState(): A2aTaskState {
    return this.state;
  }

  /** The approval the task waits for: the one named, or the oldest. */
  pendingApproval(requestId?: string): HitlRequestEventDict | undefined {
    return requestId ? this.pending.find((r) => r.request_id === requestId) : this.pending[0];
  }

  /**
   * The approval a late answer meant (the one named, or the last asked), when nobody answered it
   * in time: its call was closed `timeout` (the run's done may not be in yet), or the run ended
   * so; undefined otherwise.
   */
  expiredApproval(requestId?: string): string | undefined {
    const meant = requestId ?? this.lastAsked;
    return this.endReason === 'timeout' || (meant !== undefined && this.timedOut.has(meant)) ? meant : undefined;
  }

  /** The task as it stands after the events folded in so far. */
  task(): A2aTask {
    return {
      id: this.taskId,
      contextId: this.contextId,
      status: this.status(),
      artifacts: this.answerStarted ? [this.answerArtifact(this.answer)] : [],
      metadata: { dataagent: { session_id: this.sessionId, run_id: this.taskId, seq: this.lastSeq, ...(this.usage ? { usage: this.usage } : {}) } },
    };
  }

  /** Records that the client answered an approval: the task works again (the run's next events follow). */
  answered(requestId: string): void {
    const at = this.pending.findIndex((r) => r.request_id === requestId);
    if (at >= 0) this.pending.splice(at, 1);
    if (this.state === 'TASK_STATE_INPUT_REQUIRED' && this.pending.length === 0) {
      this.state = 'TASK_STATE_WORKING';
      this.statusMessage = undefined;
    }
  }

  /** Folds `event` in and returns the stream updates it becomes (none for events a task has no place for). */
  apply(event: EventDict): A2aStreamResponse[] {
    if (event.run_id !== this.taskId || event.seq <= this.lastSeq) return [];
    this.lastSeq = event.seq;
    switch (event.event_type) {
      case 'run_started':
        // A run that starts again (answered, or taken over) asks again for what is still open.
        this.pending.length = 0;
        return this.state === 'TASK_STATE_WORKING' ? [] : [this.moveTo('TASK_STATE_WORKING', event)];
      case 'text': {
        if (!event.content && !(event.is_final && this.answerStarted)) return [];
        const resumed = this.state === 'TASK_STATE_WORKING' ? [] : [this.moveTo('TASK_STATE_WORKING', event)];
        const append = this.answerStarted;
        this.answer += event.content;
        this.answerStarted = true;
        return [...resumed, { artifactUpdate: { ...this.envelope(event), artifact: this.answerArtifact(event.content), append, lastChunk: event.is_final } }];
      }
      case 'tool_call':
        return [this.moveTo('TASK_STATE_WORKING', event, [{ type: 'tool_call', tool_call_id: event.tool_call_id, tool_name: event.tool_name, tool_args: event.tool_args }])];
      case 'tool_result': {
        this.resolve(event.tool_call_id, event.status);
        const update = this.moveTo('TASK_STATE_WORKING', event, [{ type: 'tool_result', tool_call_id: event.tool_call_id, status: event.status, result: event.result }]);
        // Another call of the same step may still wait for its answer: the task asks again.
        const waiting = this.pending[0];
        return waiting ? [update, this.ask(waiting, event)] : [update];
      }
      case 'hitl_request':
        this.pending.push(event);
        this.lastAsked = event.request_id;
        return [this.ask(event, event)];
      case 'error':
        if (!event.recoverable) {
          this.failure = event.error;
          return [];
        }
        return [this.moveTo('TASK_STATE_WORKING', event, [{ type: 'notice', error_code: event.error_code ?? null, message: event.error }])];
      case 'done': {
        this.pending.length = 0;
        this.endReason = event.reason;
        this.usage = event.usage;
        const state: A2aTaskState = event.cancelled ? 'TASK_STATE_CANCELED' : this.failure ? 'TASK_STATE_FAILED' : 'TASK_STATE_COMPLETED';
        const why = event.cancelled ? `The run was cancelled${event.reason && event.reason !== 'cancelled' ? ` (${event.reason})` : ''}.` : this.failure;
        return [this.moveTo(state, event, why ? [{ type: 'done', cancelled: event.cancelled, reason: event.reason ?? null }] : [], why)];
      }
      default:
        return [];
    }
  }

  /** Waits for the client's answer to `request` (announced by `event`). */
  private ask(request: HitlRequestEventDict, event: EventDict): A2aStreamResponse {
    const { name, args } = request.action_request;
    const question = `Approve ${name} ${JSON.stringify(args)}? Answer this task with "approve" or "reject".`;
    const data = { type: 'approval_request', request_id: request.request_id, action_request: request.action_request, allowed_decisions: request.allowed_decisions, ...(request.expires_at ? { expires_at: request.expires_at } : {}) };
    return this.moveTo('TASK_STATE_INPUT_REQUIRED', event, [data], question);
  }

  /** A call's approval is over once its result is in. */
  private resolve(toolCallId: string, status?: string): void {
    const at = this.pending.findIndex((r) => toolCallOfRequest(r.request_id) === toolCallId);
    if (at < 0) return;
    // A call still waiting for its approval never ran: a `timeout` result is its approval's.
    if (status === 'timeout') this.timedOut.add(this.pending[at]!.request_id);
    this.pending.splice(at, 1);
  }

  /** Moves to `state` with a status message built from `data` parts (and `text`, first), and returns that status update. */
  private moveTo(state: A2aTaskState, event: EventDict, data: Array<Record<string, unknown>> = [], text?: string): A2aStreamResponse {
    this.state = state;
    this.timestamp = event.timestamp;
    const parts: A2aPart[] = [...(text ? [{ text }] : []), ...data.map((d) => ({ data: d, mediaType: 'application/json' as const }))];
    this.statusMessage = parts.length > 0 ? { messageId: `${event.run_id}:${event.seq}`, contextId: this.contextId, taskId: this.taskId, role: 'ROLE_AGENT', parts } : undefined;
    return { statusUpdate: { ...this.envelope(event), status: this.status() } };
  }

  private status(): A2aTaskStatus {
    return { state: this.state, ...(this.statusMessage ? { message: this.statusMessage } : {}), ...(this.timestamp ? { timestamp: this.timestamp } : {}) };
  }

  private envelope(event: EventDict): { taskId: string; contextId: string; metadata: { dataagent: { seq: number; usage?: RunUsage } } } {
    const usage = event.event_type === 'done' ? event.usage : undefined;
    return { taskId: this.taskId, contextId: this.contextId, metadata: { dataagent: { seq: event.seq, ...(usage ? { usage } : {}) } } };
  }

  private answerArtifact(text: string): A2aArtifact {
    return { artifactId: `${this.taskId}:${ANSWER_ARTIFACT}`, name: ANSWER_ARTIFACT, parts: [{ text }] };
  }
}
