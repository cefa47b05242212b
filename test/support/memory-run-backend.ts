import type { EventDict } from '#core/events/execution-event.js';
import type { HitlRecord, HitlRequests, HitlStatus } from '#transport/hitl-requests.js';
import type { AppendResult, RunEventLog, RunOwner } from '#transport/run-event-log.js';
import { RunFencedError, type ParkedRecord, type RunLedger, type StoredStep, type TakenRun } from '#transport/run-ledger.js';
import type { RunJobData, RunQueue } from '#transport/run-queue.js';
import type { TenantRunSlots } from '#transport/tenant-run-slots.js';

interface RunKeys {
  log: EventDict[];
  done: boolean;
  cancel: boolean;
  owner: number;
  steps: StoredStep[];
  calls: Set<string>;
  parked?: ParkedRecord;
}

/**
 * What the run path keeps in Redis (the event log, the ledger, the queue's job states, HITL
 * records, tenant slots), in memory, with the same rules: one done seals a run, a cancel record
 * lets only a done (or a closing event) in, an epoch fences off a former owner. For unit specs
 * of the runner and the lifecycle; the Lua scripts themselves are covered by the int specs.
 */
export class MemoryRunBackend {
  readonly runs = new Map<string, RunKeys>();
  readonly jobs = new Map<string, { state: 'waiting' | 'active' | 'delayed'; data: RunJobData; until?: number }>();
  readonly requests = new Map<string, HitlRecord>();
  readonly slots = new Map<string, Set<string>>();
  readonly active = new Map<string, Map<string, RunOwner>>();

  private keys(runId: string): RunKeys {
    let run = this.runs.get(runId);
    if (!run) this.runs.set(runId, (run = { log: [], done: false, cancel: false, owner: 0, steps: [], calls: new Set() }));
    return run;
  }

  readonly log = {
    append: async (event: EventDict, epoch?: number, closing = false): Promise<AppendResult> => {
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
      return { status: 'appended', event: stored };
    },
    requestCancel: async (runId: string) => {
      const run = this.keys(runId);
      run.cancel = true;
      return !run.done;
    },
    markActive: async (sessionId: string, runId: string, owner: RunOwner) => {
      if (!this.active.has(sessionId)) this.active.set(sessionId, new Map());
      this.active.get(sessionId)!.set(runId, owner);
    },
    activeRuns: async (sessionId: string) => [...(this.active.get(sessionId) ?? [])].map(([runId, owner]) => ({ runId, ...owner })),
    forgetActive: async (sessionId: string, runId: string) => void this.active.get(sessionId)?.delete(runId),
    isCancelRequested: async (runId: string) => this.keys(runId).cancel,
    range: async (runId: string, afterSeq = 0) => this.keys(runId).log.filter((e) => e.seq > afterSeq),
    lastSeq: async (runId: string) => this.keys(runId).log.length,
    isSealed: async (runId: string) => this.keys(runId).done,
  } as unknown as RunEventLog & { append: (event: EventDict, epoch?: number, closing?: boolean) => Promise<AppendResult> };

  readonly ledger = {
    claim: async (runId: string) => ++this.keys(runId).owner,
    take: async (runId: string): Promise<TakenRun> => {
      const run = this.keys(runId);
      if (run.done) return { sealed: true };
      const epoch = ++run.owner;
      const parked = run.parked;
      run.parked = undefined;
      return { sealed: false, epoch, events: [...run.log], steps: epoch > 1 ? [...run.steps] : [], ...(parked ? { parked } : {}), cancelled: run.cancel };
    },
    park: async (runId: string, epoch: number, parked: ParkedRecord) => {
      const run = this.keys(runId);
      if (run.owner !== epoch) throw new RunFencedError(runId);
      run.parked = parked;
    },
    parkedOf: async (runId: string) => this.keys(runId).parked ?? null,
    recordStep: async (runId: string, epoch: number, step: StoredStep) => {
      const run = this.keys(runId);
      if (run.owner !== epoch) throw new RunFencedError(runId);
      run.steps.push(step);
    },
    intend: async (runId: string, epoch: number, callId: string, argsHash: string) => {
      const run = this.keys(runId);
      if (run.owner !== epoch) throw new RunFencedError(runId);
      const key = `${callId}:${argsHash}`;
      if (run.calls.has(key)) return 'interrupted';
      run.calls.add(key);
      return 'new';
    },
    steps: async (runId: string) => [...this.keys(runId).steps],
  } as unknown as RunLedger;

  readonly queue = {
    enqueue: async (data: RunJobData) => void this.jobs.set(data.runId, { state: 'waiting', data }),
    removeWaiting: async (runId: string) => {
      const job = this.jobs.get(runId);
      if (job?.state === 'active') return false;
      this.jobs.delete(runId);
      return true;
    },
    promote: async (runId: string) => {
      const job = this.jobs.get(runId);
      if (job?.state !== 'delayed') return false;
      job.state = 'waiting';
      return true;
    },
    jobState: async (runId: string) => this.jobs.get(runId)?.state ?? 'unknown',
  } as unknown as RunQueue;

  readonly hitl = {
    open: async (record: Omit<HitlRecord, 'status' | 'message'>): Promise<HitlStatus> => {
      const existing = this.requests.get(record.requestId);
      if (existing) return existing.status;
      this.requests.set(record.requestId, { ...record, status: 'pending', message: '' });
      return 'pending';
    },
    get: async (requestId: string) => {
      const record = this.requests.get(requestId);
      return record ? { ...record } : null;
    },
    decide: async (requestId: string, _owner: unknown, status: Exclude<HitlStatus, 'pending'>, message = '') => {
      const record = this.requests.get(requestId);
      if (!record) return { outcome: 'missing' };
      if (record.status !== 'pending') return { outcome: `decided:${record.status}` };
      Object.assign(record, { status, message });
      return { outcome: 'ok', runId: record.runId, sessionId: record.sessionId };
    },
    isApproveAll: async () => false,
    approveAll: async () => undefined,
  } as unknown as HitlRequests;

  readonly tenantSlots = {
    release: async (tenantId: string, runId: string) => void this.slots.get(tenantId)?.delete(runId),
  } as unknown as TenantRunSlots;

  /** Takes a tenant slot, as the gateway does before a run is created. */
  takeSlot(tenantId: string, runId: string): void {
    if (!this.slots.has(tenantId)) this.slots.set(tenantId, new Set());
    this.slots.get(tenantId)!.add(runId);
  }

  /** The queue hands a job to a worker: the worker's `process` decides where it goes next. */
  async process(runId: string, handle: (job: RunJobData) => Promise<unknown>): Promise<unknown> {
    const job = this.jobs.get(runId);
    if (!job || job.state !== 'waiting') throw new Error(`job ${runId} is ${job?.state ?? 'gone'}, not waiting`);
    job.state = 'active';
    const outcome = await handle(job.data);
    if (outcome && typeof outcome === 'object' && 'parked' in outcome) Object.assign(job, { state: 'delayed', until: (outcome as { parked: { until: number } }).parked.until });
    else if (outcome === 'handed_back') job.state = 'waiting';
    else this.jobs.delete(runId);
    return outcome;
  }

  /** A delayed job whose time has come goes back to the queue, as BullMQ moves it. */
  expire(now = Date.now()): void {
    for (const job of this.jobs.values()) if (job.state === 'delayed' && (job.until ?? 0) <= now) job.state = 'waiting';
  }

  eventsOf(runId: string): EventDict[] {
    return this.keys(runId).log;
  }
}
