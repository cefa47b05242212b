import type { EventDict } from '../../events/execution-event.js';
import {
  RunFencedError,
  type AppendResult,
  type DecideOutcome,
  type DurableWrites,
  type HitlRecord,
  type HitlRecords,
  type HitlStatus,
  type ParkedDeadlines,
  type ParkedRecord,
  type RunJobData,
  type RunJobs,
  type RunLedger,
  type RunLog,
  type RunOwner,
  type RunRef,
  type RunRelay,
  type RunSlots,
  type StoredStep,
  type TakenRun,
} from '../run-ports.js';
import { MemoryRunBudgets } from './memory-run-budgets.js';

/** What one run keeps: its log, its seal, its cancel record, its owner epoch, its steps, intents and wait. */
interface RunKeys {
  log: EventDict[];
  done: boolean;
  cancel: boolean;
  owner: number;
  steps: StoredStep[];
  calls: Set<string>;
  parked?: ParkedRecord;
}

type JobState = 'waiting' | 'active' | 'delayed';

/**
 * The run's ports in memory, with the rules of the Redis adapters: one done seals a run, a
 * cancel record lets only a done (or a closing event) in, an epoch fences off a former owner, a
 * job a worker holds is not removed, a decision is made once. For specs of the lifecycle and the
 * runner, and for a process with no Redis; the contract spec (memory-run-backend.spec.ts) runs
 * the same cases against these and the Redis adapters.
 */
export class MemoryRunBackend {
  readonly runs = new Map<string, RunKeys>();
  readonly jobStates = new Map<string, { state: JobState; data: RunJobData; until?: number }>();
  readonly requests = new Map<string, HitlRecord>();
  readonly slotsHeld = new Map<string, Set<string>>();
  readonly active = new Map<string, Map<string, RunOwner>>();
  readonly deadlineOf = new Map<string, number>();
  private readonly approveAllSessions = new Set<string>();
  private readonly watchers = new Map<string, Set<(event: EventDict, raw: string) => void>>();

  private keys(runId: string): RunKeys {
    let run = this.runs.get(runId);
    if (!run) this.runs.set(runId, (run = { log: [], done: false, cancel: false, owner: 0, steps: [], calls: new Set() }));
    return run;
  }

  private owned(runId: string, epoch: number): RunKeys {
    const run = this.keys(runId);
    if (run.owner !== epoch) throw new RunFencedError(runId);
    return run;
  }

  readonly log: RunLog = {
    append: async (event, epoch, closing = false): Promise<AppendResult> => {
      const run = this.keys(event.run_id);
      if (run.done) return { status: 'sealed' };
      if (epoch !== undefined && run.owner !== epoch) return { status: 'fenced' };
      if (event.event_type !== 'done' && !closing && run.cancel) return { status: 'cancelled' };
      const stored = { ...event, seq: run.log.length + 1 };
      run.log.push(stored);
      if (event.event_type === 'done') {
        run.done = true;
        this.active.get(event.session_id)?.delete(event.run_id);
      }
      for (const watcher of this.watchers.get(event.run_id) ?? []) watcher(stored, JSON.stringify(stored));
      return { status: 'appended', event: stored };
    },
    requestCancel: async (runId) => {
      const run = this.keys(runId);
      run.cancel = true;
      return !run.done;
    },
    markActive: async (sessionId, runId, owner) => {
      if (!this.active.has(sessionId)) this.active.set(sessionId, new Map());
      this.active.get(sessionId)!.set(runId, owner);
    },
    activeRuns: async (sessionId) => [...(this.active.get(sessionId) ?? [])].map(([runId, owner]) => ({ runId, ...owner })),
    forgetActive: async (sessionId, runId) => void this.active.get(sessionId)?.delete(runId),
    isCancelRequested: async (runId) => this.keys(runId).cancel,
    range: async (runId, afterSeq = 0, count) => {
      const events = this.keys(runId).log.filter((e) => e.seq > afterSeq);
      return count === undefined ? events : events.slice(0, count);
    },
    lastSeq: async (runId) => this.keys(runId).log.length,
    isSealed: async (runId) => this.keys(runId).done,
  };

  readonly ledger: RunLedger = {
    claim: async (runId) => ++this.keys(runId).owner,
    take: async (runId): Promise<TakenRun> => {
      const run = this.keys(runId);
      if (run.done) return { sealed: true };
      const epoch = ++run.owner;
      const parked = run.parked;
      run.parked = undefined;
      return { sealed: false, epoch, events: [...run.log], steps: epoch > 1 ? [...run.steps] : [], ...(parked ? { parked } : {}), cancelled: run.cancel };
    },
    park: async (runId, epoch, parked) => {
      this.owned(runId, epoch).parked = parked;
    },
    parkedOf: async (runId) => this.keys(runId).parked ?? null,
    recordStep: async (runId, epoch, step) => {
      this.owned(runId, epoch).steps.push(step);
    },
    intend: async (runId, epoch, callId, argsHash) => {
      const run = this.owned(runId, epoch);
      const key = `${callId}:${argsHash}`;
      if (run.calls.has(key)) return 'interrupted';
      run.calls.add(key);
      return 'new';
    },
    steps: async (runId) => [...this.keys(runId).steps],
  };

  readonly jobs: RunJobs = {
    enqueue: async (data) => void this.jobStates.set(data.runId, { state: 'waiting', data }),
    removeWaiting: async (runId) => {
      if (this.jobStates.get(runId)?.state === 'active') return false;
      this.jobStates.delete(runId);
      return true;
    },
    promote: async (runId) => {
      const job = this.jobStates.get(runId);
      if (job?.state !== 'delayed') return false;
      job.state = 'waiting';
      return true;
    },
    jobState: async (runId) => this.jobStates.get(runId)?.state ?? 'unknown',
  };

  readonly hitl: HitlRecords = {
    open: async (record): Promise<HitlStatus> => {
      const existing = this.requests.get(record.requestId);
      if (existing) return existing.status;
      this.requests.set(record.requestId, { ...record, status: 'pending', message: '' });
      return 'pending';
    },
    get: async (requestId) => {
      const record = this.requests.get(requestId);
      return record ? { ...record } : null;
    },
    decide: async (requestId, owner, status, message = ''): Promise<DecideOutcome> => {
      const record = this.requests.get(requestId);
      if (!record || (owner && (owner.tenantId !== record.tenantId || owner.userId !== record.userId))) return { outcome: 'missing' };
      if (record.status !== 'pending') return { outcome: `decided:${record.status}` };
      if (owner && record.expiresAt !== undefined && Date.now() >= record.expiresAt) return { outcome: 'expired' };
      Object.assign(record, { status, message });
      return { outcome: 'ok', runId: record.runId, sessionId: record.sessionId };
    },
    isApproveAll: async (sessionId) => this.approveAllSessions.has(sessionId),
  };

  /** Runs' reservations on their tenants' and people's budgets. */
  readonly budgets = new MemoryRunBudgets();

  readonly slots: RunSlots = {
    release: async (tenantId, runId) => void this.slotsHeld.get(tenantId)?.delete(runId),
  };

  readonly relay: RunRelay = {
    watch: async (runId, listener) => {
      if (!this.watchers.has(runId)) this.watchers.set(runId, new Set());
      this.watchers.get(runId)!.add(listener);
      return () => void this.watchers.get(runId)?.delete(listener);
    },
  };

  readonly deadlines: ParkedDeadlines = {
    add: async (run: RunRef, deadline: number) => void this.deadlineOf.set(run.runId, deadline),
  };

  /** Takes a tenant slot, as the gateway does before a run is created. */
  takeSlot(tenantId: string, runId: string): void {
    if (!this.slotsHeld.has(tenantId)) this.slotsHeld.set(tenantId, new Set());
    this.slotsHeld.get(tenantId)!.add(runId);
  }

  /** Whether the person chose "approve all" for the session's calls. */
  approveAll(sessionId: string): void {
    this.approveAllSessions.add(sessionId);
  }

  /** The queue hands a job to a worker: the worker's `process` decides where it goes next. */
  async process(runId: string, handle: (job: RunJobData) => Promise<unknown>): Promise<unknown> {
    const job = this.jobStates.get(runId);
    if (!job || job.state !== 'waiting') throw new Error(`job ${runId} is ${job?.state ?? 'gone'}, not waiting`);
    job.state = 'active';
    const outcome = await handle(job.data);
    if (outcome && typeof outcome === 'object' && 'parked' in outcome) Object.assign(job, { state: 'delayed', until: (outcome as { parked: { until: number } }).parked.until });
    else if (outcome === 'handed_back') job.state = 'waiting';
    else this.jobStates.delete(runId);
    return outcome;
  }

  /** A delayed job whose time has come goes back to the queue, as BullMQ moves it. */
  expire(now = Date.now()): void {
    for (const job of this.jobStates.values()) if (job.state === 'delayed' && (job.until ?? 0) <= now) job.state = 'waiting';
  }

  eventsOf(runId: string): EventDict[] {
    return this.keys(runId).log;
  }
}

/** Durable writes with nothing to keep: every write is made now (a process with no outage to outlive). */
export const WRITE_NOW: DurableWrites = {
  run: async (_name, write) => {
    await write();
    return true;
  },
};
