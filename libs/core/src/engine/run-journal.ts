import type { EventDict, RunUsage } from '../events/execution-event.js';
import type { ChatMessage, ToolCallRequest } from '../llm/chat-model.js';
import type { TurnSegment } from './text-tool-calls.js';

/**
 * One message a run added to the conversation, recorded durably before the events that follow
 * from it go out. A run taken over by another worker rebuilds its conversation from these steps
 * and continues right after the last one: model turns that ended and tool results that were
 * recorded are replayed, not redone.
 */
export interface JournalStep {
  message: ChatMessage;
  /** For an assistant message that calls tools: the rest of its turn in order (text to show, calls to run). */
  plan?: TurnSegment[];
  /** The events that belong to this step, sent after it is recorded; a continuation sends them again. */
  replay?: EventDict[];
  /** The run ended right after this step, for this reason (`tool_call_limit`). */
  end?: string;
  /** What the run's model calls had used when this step was recorded: a continuation counts on from it. */
  usage?: RunUsage;
}

/** Where a run records its progress (the worker's Redis ledger; absent in a plain executor). */
export interface RunJournal {
  /** Steps recorded by earlier attempts of this run, oldest first; empty on a first attempt. */
  readonly resumed: readonly JournalStep[];
  /** Records a step; throws when this worker no longer owns the run. */
  step(step: JournalStep): Promise<void>;
  /**
   * Records the intent to run a call with side effects, keyed by call id and argument hash.
   * `interrupted`: an earlier attempt recorded it and never its result, so whether it took
   * effect is unknown.
   */
  intend(call: ToolCallRequest, argsHash: string): Promise<'new' | 'interrupted'>;
}

/** Why a run stops on this worker without ending. */
export type HandoffReason = 'drain' | 'redis_unavailable' | 'lock_lost' | 'fenced' | 'park';

/**
 * The abort reason of a run that stops on this worker without ending: it continues elsewhere
 * (drain, Redis out of reach, a lost job lock, another worker now owns it), or it is parked:
 * it waits for a person holding no worker, and continues on whichever worker takes it when
 * the wait is over. No `done`, no cancelled approval.
 */
export class RunHandoff extends Error {
  constructor(
    readonly why: HandoffReason,
    /** For `park`: what the run waits for, and until when at most. */
    readonly wait?: ParkedWait,
  ) {
    super(`run handed off: ${why}`);
    this.name = 'RunHandoff';
  }
}

/** What a parked run waits for: a person's answer to one request, due by `until` (epoch ms). */
export interface ParkedWait {
  /** The request (an approval's id) whose answer continues the run. */
  requestId: string;
  /** The call the request is about: a cancel of the parked run ends that call cancelled. */
  toolCallId: string;
  /** When the wait expires (epoch ms): the run continues then, with no answer. */
  until: number;
}

/** Whether a run's abort signal fired because the run moves to another worker (or parks). */
export function isHandoff(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof RunHandoff;
}
