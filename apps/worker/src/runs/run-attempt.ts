import { createHash } from 'node:crypto';
import { DoneEvent, type EventDict, type ExecutionEvent } from '#core/events/execution-event.js';
import { isHandoff, RunHandoff, type RunJournal } from '#core/engine/run-journal.js';
import type { ChatMessage } from '#core/llm/chat-model.js';
import { isRedisUnavailable } from '#transport/redis-connection.js';
import type { RunEnd, WorkerRunLifecycle, RunRef } from '#core/run/run-lifecycle.js';
import type { EventArchiver } from './event-archiver.js';
import { toNewMessage } from '#core/session/message-records.js';
import { RunFencedError, type RunJobData, type RunLedger, type RunLog, type StoredStep, type TakenRun } from '#core/run/run-ports.js';

export type FinalStatus = RunEnd['status'];

/**
 * Where an attempt's run stands: going on; ended by this attempt; or found ended by another
 * (its done was there when the attempt took the run, or refused one of its writes).
 */
export type AttemptEnd = 'open' | 'ended_here' | 'ended_before_take' | 'ended_during';

export interface RunAttemptDeps {
  log: Pick<RunLog, 'append'>;
  ledger: Pick<RunLedger, 'take' | 'recordStep' | 'intend'>;
  lifecycle: Pick<WorkerRunLifecycle, 'finish' | 'released'>;
  archiver: Pick<EventArchiver, 'add'>;
}

/**
 * One attempt at a run on this worker, from taking it to ending it or letting it go: who owns
 * it (the ledger's epoch), what it has sent (the last seq, and what a continued parked run sent
 * before it parked), the messages it added and how it ends. Every write of the attempt goes
 * through it: a write refused because another worker owns the run, or one Redis cannot take,
 * aborts the attempt as a hand-off; the end goes to the lifecycle.
 */
export class RunAttempt {
  readonly controller = new AbortController();
  readonly ref: RunRef;
  readonly envelope: { sessionId: string; runId: string };
  /** The messages this attempt added (a continuation: with the ones replayed from its steps). */
  readonly added: ChatMessage[] = [];
  status: FinalStatus = 'completed';
  failure?: string;
  /** Where the run stands for this attempt: one state, read through foundSealed, endedElsewhere and isOver. */
  private state: AttemptEnd = 'open';
  private epoch = 0;
  private lastSeq = 0;
  /** This attempt started the run (published its run_started), rather than continuing it. */
  firstStart = false;
  /** A continued parked run: the events it sent before parking, which the engine's replay of its turn sends again. */
  private resent: EventDict[] = [];

  constructor(
    private readonly job: RunJobData,
    private readonly deps: RunAttemptDeps,
  ) {
    this.ref = { runId: job.runId, sessionId: job.sessionId, tenantId: job.tenantId };
    this.envelope = { sessionId: job.sessionId, runId: job.runId };
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The attempt stops here without ending the run: it continues elsewhere, or parks. */
  get handedOff(): boolean {
    return isHandoff(this.controller.signal);
  }

  get handoff(): RunHandoff | undefined {
    return this.handedOff ? (this.controller.signal.reason as RunHandoff) : undefined;
  }

  /** A write met the run's done: another ended it while this attempt ran. */
  get foundSealed(): boolean {
    return this.state === 'ended_during';
  }

  /** Another ended the run, before this attempt took it or while it ran. */
  get endedElsewhere(): boolean {
    return this.state === 'ended_before_take' || this.state === 'ended_during';
  }

  /** This attempt ended the run, or found it ended: nothing of it is left to end. */
  get isOver(): boolean {
    return this.state !== 'open';
  }

  get ownerEpoch(): number {
    return this.epoch;
  }

  get seq(): number {
    return this.lastSeq;
  }

  /** Takes ownership of the run: its done, its epoch, its log, its steps and parked wait, in one round trip. */
  async take(): Promise<TakenRun> {
    const taken = await this.guard(() => this.deps.ledger.take(this.job.runId));
    if (taken.sealed) this.state = 'ended_before_take';
    else this.epoch = taken.epoch;
    return taken;
  }

  /**
   * Continues a parked run where it stopped: the events it sent after its last step come again
   * from the engine's replay of the turn, and are taken as sent, not sent twice.
   */
  continueParked(taken: Extract<TakenRun, { sealed: false }>): void {
    const startedAt = taken.events.find((e) => e.event_type === 'run_started')?.seq ?? 0;
    this.lastSeq = taken.events.at(-1)?.seq ?? 0;
    this.resent = taken.events.filter((e) => e.seq > (taken.steps.at(-1)?.seq ?? startedAt));
  }

  /** Goes on from the end of the log as taken, which holds nothing past the run's last recorded step: nothing is redone. */
  continueQuietly(events: readonly EventDict[]): void {
    this.lastSeq = events.at(-1)?.seq ?? 0;
  }

  /** Runs a write of the attempt; a fenced write or Redis out of reach hands the run off (and still throws). */
  async guard<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (err instanceof RunFencedError) this.controller.abort(new RunHandoff('fenced'));
      else if (isRedisUnavailable(err)) this.controller.abort(new RunHandoff('redis_unavailable'));
      throw err;
    }
  }

  /**
   * Appends an event to the run's log (fenced by the epoch) and archives it.
   * @returns the event as appended, or null when the log refused it (the run ended, was
   *   cancelled, or another worker owns it: the attempt is aborted accordingly).
   */
  async publish(event: ExecutionEvent, archive = true): Promise<EventDict | null> {
    if (event instanceof DoneEvent) throw new Error("a run's done is the lifecycle's to write");
    const dict = event.toDict();
    const again = replayed(this.resent, dict);
    if (again) return again;
    this.resent = [];
    const result = await this.guard(() => this.deps.log.append(dict, this.epoch));
    if (result.status === 'appended') {
      this.lastSeq = result.event.seq;
      if (archive) this.deps.archiver.add(result.event);
      return result.event;
    }
    if (result.status === 'sealed') this.state = 'ended_during';
    this.controller.abort(result.status === 'fenced' ? new RunHandoff('fenced') : new Error(result.status));
    return null;
  }

  /** Ends the run through the lifecycle (→ completed | failed | cancelled | timeout): its messages and row, its slot, its done. */
  async end(how: FinalStatus, options: Pick<RunEnd, 'reason' | 'closeCall' | 'usage'> = {}): Promise<void> {
    if (this.state === 'open') this.state = 'ended_here';
    this.status = how;
    const { job } = this;
    // Ids derived from the run and position, so a retry after a lost acknowledgement, or the
    // worker that continues a run whose worker died while storing it, finds its rows instead of doubling them.
    const messages = how === 'cancelled' || how === 'timeout' ? [] : this.added.map((m, i) => ({ ...toNewMessage(m, job.sessionId, job.runId), messageId: messageIdFor(job.runId, i) }));
    const result = await this.guard(() => this.deps.lifecycle.finish(this.ref, this.epoch, { status: how, ...options, ...(this.failure === undefined ? {} : { error: this.failure }), messages }));
    if (result.status === 'appended') this.deps.archiver.add(result.event);
    else if (result.status === 'fenced') this.controller.abort(new RunHandoff('fenced'));
  }

  /** Gives the run's tenant slot back when the run ended elsewhere, or this attempt stopped without ending it. */
  async letGo(): Promise<void> {
    if (this.state === 'ended_here') return;
    await this.deps.lifecycle.released(this.ref);
  }

  /** The journal the engine records the run's steps and tool intents in, fenced by this attempt's epoch. */
  journal(resumed: StoredStep[]): RunJournal {
    const { job, deps } = this;
    return {
      resumed,
      step: async (step) => {
        if (this.handedOff) throw this.controller.signal.reason;
        await this.guard(() => deps.ledger.recordStep(job.runId, this.epoch, { ...step, seq: this.lastSeq }));
      },
      intend: async (call, hash) => {
        if (this.handedOff) throw this.controller.signal.reason;
        return this.guard(() => deps.ledger.intend(job.runId, this.epoch, call.id, hash, call.name));
      },
    };
  }
}

/** Whether the run was parked and nothing happened to it since: it continues without telling the client anything. */
export function isQuietContinuation(taken: Extract<TakenRun, { sealed: false }>): boolean {
  return taken.parked !== undefined && taken.parked.seq === (taken.events.at(-1)?.seq ?? 0);
}

/** An event's identity for replay: what it says, not when it was made. */
function sameEvent(a: EventDict, b: EventDict): boolean {
  const strip = ({ seq: _seq, timestamp: _at, expires_at: _expires, ...rest }: EventDict & { expires_at?: string }) => JSON.stringify(rest);
  return strip(a) === strip(b);
}

/**
 * Whether `dict` is the next of the events a continued parked run sent before it parked (the
 * engine replays its turn and sends them again): then it is that event, as the log has it, and
 * leaves `resent`. A question that is not asked again (it was answered) is passed over.
 */
function replayed(resent: EventDict[], dict: EventDict): EventDict | null {
  while (resent.length > 0 && resent[0]!.event_type === 'hitl_request' && dict.event_type !== 'hitl_request') resent.shift();
  if (resent.length > 0 && sameEvent(resent[0]!, dict)) return resent.shift()!;
  return null;
}

/** A UUID (version 8, name-based) for the run's i-th message: the same on every attempt of the run. */
export function messageIdFor(runId: string, index: number): string {
  const h = createHash('sha256').update(`${runId}:message:${index}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
