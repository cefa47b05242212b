import type { EventDict } from '#core/events/execution-event.js';
import { toolCallOfRequest } from '#core/hitl/approval-request-id.js';

/** One part of the AI SDK's UI message stream (protocol v1), as `useChat` reads it. */
export type UiChunk = { type: string } & Record<string, unknown>;

/**
 * Projects a run's events onto the AI SDK's UI message stream, one event at a time: the
 * assistant message is the run (`messageId` = run id), text events become text parts, a tool
 * call and its result one tool part, an approval a `tool-approval-request`, and `done` the
 * finish (or `abort` when cancelled). The run's log stays the only record; this keeps only which
 * text part is open.
 */
export class UiMessageProjection {
  private textPart?: string;
  private parts = 0;

  /** The chunks `event` becomes (none for events a UI message has no place for). */
  chunksOf(event: EventDict): UiChunk[] {
    switch (event.event_type) {
      case 'run_started':
        return [{ type: 'start', messageId: event.run_id }, { type: 'start-step' }];
      case 'text': {
        if (!event.content) return [];
        const opened: UiChunk[] = [];
        if (!this.textPart) {
          this.textPart = `${event.run_id}:${++this.parts}`;
          opened.push({ type: 'text-start', id: this.textPart });
        }
        return [...opened, { type: 'text-delta', id: this.textPart, delta: event.content }];
      }
      case 'tool_call':
        return [...this.closeText(), { type: 'tool-input-available', toolCallId: event.tool_call_id, toolName: event.tool_name, input: event.tool_args, dynamic: true }];
      case 'tool_result':
        return event.status === 'success'
          ? [{ type: 'tool-output-available', toolCallId: event.tool_call_id, output: event.result, dynamic: true }]
          : event.status === 'rejected' || event.status === 'cancelled'
            ? [{ type: 'tool-output-denied', toolCallId: event.tool_call_id }]
            : [{ type: 'tool-output-error', toolCallId: event.tool_call_id, errorText: errorText(event.result), dynamic: true }];
      case 'hitl_request':
        return [...this.closeText(), { type: 'tool-approval-request', approvalId: event.request_id, toolCallId: toolCallOfRequest(event.request_id) }];
      case 'error':
        // A recoverable error is news, not the end: a data part the page may show; a fatal one ends the message.
        return event.recoverable
          ? [{ type: 'data-dataagent-notice', data: { error_code: event.error_code ?? null, message: event.error }, transient: true }]
          : [...this.closeText(), { type: 'error', errorText: event.error }];
      case 'done':
        // The run's usage goes as the message's metadata (`message.metadata.usage` on the page).
        return [
          ...this.closeText(),
          { type: 'finish-step' },
          event.cancelled
            ? { type: 'abort', ...(event.reason ? { reason: event.reason } : {}) }
            : { type: 'finish', finishReason: event.reason === 'tool_calls' ? 'tool-calls' : event.reason === 'budget' ? 'length' : 'stop', ...(event.usage ? { messageMetadata: { usage: event.usage } } : {}) },
        ];
      default:
        return [];
    }
  }

  private closeText(): UiChunk[] {
    if (!this.textPart) return [];
    const id = this.textPart;
    this.textPart = undefined;
    return [{ type: 'text-end', id }];
  }
}

function errorText(result: unknown): string {
  if (typeof result === 'string') return result;
  const error = (result as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : JSON.stringify(result);
}
