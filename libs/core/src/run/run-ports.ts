import type { EventDict } from '../events/execution-event.js';
import type { JournalStep, ParkedWait } from '../engine/run-journal.js';
import type { ChatMessage, ModelOptions, ToolSpec } from '../llm/chat-model.js';
import type { ConversationStore } from '../session/session-store.js';
import type { BudgetDefinition } from '../usage/budget.js';
import type { ModelCallBudget } from '../usage/call-budget.js';
import type { PriceTable } from '../usage/price-table.js';

/**
 * What a run needs of the stores around it, as interfaces: the Redis adapters in libs/transport
 * and the MySQL ones in libs/persistence implement them, and so do the memory ones in ./memory.
 * Nothing here names Redis, MySQL or Nest.
 */

// ── the event log ───────────────────────────────────────────────────────────

/** Who started a run. */
export interface RunOwner {
  tenantId: string;
  userId: string;
}

/** What an append did: stored (with its seq); refused because the run has its done (`sealed`), its cancel is recorded (`cancelled`), or another worker owns it (`fenced`). */
export type AppendResult = { status: 'appended'; event: EventDict } | { status: 'sealed' } | { status: 'cancelled' } | { status: 'fenced' };

/** A run's events in order (seq 1, 2, …), one `done` sealing them, and each session's runs without one. */
export interface RunLog {
  /**
   * Appends an event with the next seq.
   * @param epoch the appending worker's ownership: refused (`fenced`) when another took the run.
   * @param closing an event that ends something open (a cancelled call's result): let in after a cancel.
   */
  append(event: EventDict, epoch?: number, closing?: boolean): Promise<AppendResult>;
  /** Records a cancel. @returns false when the run had its done already. */
  requestCancel(runId: string): Promise<boolean>;
  markActive(sessionId: string, runId: string, owner: RunOwner): Promise<void>;
  activeRuns(sessionId: string): Promise<Array<{ runId: string } & RunOwner>>;
  forgetActive(sessionId: string, runId: string): Promise<void>;
  isCancelRequested(runId: string): Promise<boolean>;
  /** The events after `afterSeq`, at most `count`. */
  range(runId: string, afterSeq?: number, count?: number): Promise<EventDict[]>;
  lastSeq(runId: string): Promise<number>;
  isSealed(runId: string): Promise<boolean>;
}

// ── the ledger ──────────────────────────────────────────────────────────────

/** A recorded step and the seq of the last event that went out before it. */
export interface StoredStep extends JournalStep {
  seq: number;
}

/** A parked run's wait as the ledger keeps it: what it waits for, and the seq of the last event it sent before parking. */
export interface ParkedRecord extends ParkedWait {
  seq: number;
}

/**
 * What taking a run found: it had ended already, or this worker owns it now (epoch), with what
 * it has done so far, and the wait it was parked on (absent: it was not parked).
 */
export type TakenRun = { sealed: true } | { sealed: false; epoch: number; events: EventDict[]; steps: StoredStep[]; parked?: ParkedRecord; cancelled: boolean };

/** Another worker took the run over: this one must stop. */
export class RunFencedError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} is owned by another worker`);
    this.name = 'RunFencedError';
  }
}

/** Who owns a run (an epoch raised by each taker), what it has done (steps, tool intents), and where it is parked. */
export interface RunLedger {
  /** Raises the epoch without taking the run: fences off every former owner. */
  claim(runId: string): Promise<number>;
  take(runId: string): Promise<TakenRun>;
  /** @throws RunFencedError when another worker owns the run. */
  park(runId: string, epoch: number, parked: ParkedRecord): Promise<void>;
  parkedOf(runId: string): Promise<ParkedRecord | null>;
  steps(runId: string): Promise<StoredStep[]>;
  /** @throws RunFencedError when another worker owns the run. */
  recordStep(runId: string, epoch: number, step: StoredStep): Promise<void>;
  /**
   * Records the intent to call a tool, once per call and arguments.
   * @returns `interrupted` when an earlier attempt intended it already (it may have run).
   * @throws RunFencedError when another worker owns the run.
   */
  intend(runId: string, epoch: number, callId: string, argsHash: string, tool: string): Promise<'new' | 'interrupted'>;
}

// ── the queue ───────────────────────────────────────────────────────────────

/** The payload of a run job. The job's id is the run id. */
export interface RunJobData {
  runId: string;
  sessionId: string;
  tenantId: string;
  userId: string;
  assistantId: string;
  /** W3C traceparent of the gateway's span, when tracing is on: the worker's run continues that trace. */
  traceparent?: string;
  /** The API key the run came with (its id, never the key): tool bindings may name it. */
  apiKeyId?: string;
  /** The person's message; emptied once the run has ended (the session's history holds it). */
  message: string;
  requestId?: string;
  enqueuedAt: number;
  /**
   * Runs of the same session this one waits for (DATAAGENT_MULTITASK=enqueue|interrupt):
   * it starts once each has its done, so its events never interleave with theirs.
   */
  afterRuns?: string[];
  /**
   * Who decides calls that need approval: absent, the person (hitl_request); `refuse`, nobody
   * can be asked (the OpenAI-compatible API) so the model is told; `approve`, all run.
   */
  approvals?: 'refuse' | 'approve';
  /** The first message of a new session: there is no earlier conversation to read. */
  firstTurn?: boolean;
  /** How the client asked the model to sample (the OpenAI-compatible door); absent: the provider's defaults. */
  modelOptions?: ModelOptions;
  /** Tokens the client allows the whole run (the native chat's `limits.max_tokens`): it may lower DATAAGENT_MAX_RUN_TOKENS, never raise it. */
  maxRunTokens?: number;
  /** The client's own tools (the OpenAI-compatible door): offered to the model, run by the client (AgentConfig.clientTools). */
  clientTools?: ToolSpec[];
  /**
   * The results of the client's tools the session's last assistant turn called: the run
   * continues from them (role `tool`), and `message` is empty. Emptied with `message`.
   */
  toolResults?: ChatMessage[];
}

/** The jobs that carry runs to workers. */
export interface RunJobs {
  enqueue(data: RunJobData): Promise<void>;
  /** Removes a job no worker holds (waiting or delayed). @returns false when a worker holds it. */
  removeWaiting(runId: string): Promise<boolean>;
  /** Moves a delayed job (a parked run) to the front. @returns false when it is not delayed. */
  promote(runId: string): Promise<boolean>;
  /** The job's state (`waiting`, `active`, `delayed`, …; `unknown` when there is none). */
  jobState(runId: string): Promise<string>;
}

// ── approvals ───────────────────────────────────────────────────────────────

export type HitlStatus = 'pending' | 'approve' | 'reject' | 'timeout' | 'cancelled';

export interface HitlRecord {
  requestId: string;
  runId: string;
  sessionId: string;
  tenantId: string;
  userId: string;
  status: HitlStatus;
  message: string;
  /** The tool and the SHA-256 of the arguments the request is about: a decision approves exactly that call. */
  tool?: string;
  argsHash?: string;
  /** When the question expires (epoch ms), as first asked: a run that asks again keeps the first deadline. */
  expiresAt?: number;
}

/** What a request that expired unanswered tells the model. */
export const TIMED_OUT_MESSAGE = 'No decision in time';

/** What a decision did: `ok` names the request's run; otherwise `missing`, `expired` (it came after the deadline) or `decided:<status>`. */
export type DecideOutcome = { outcome: 'ok'; runId: string; sessionId: string } | { outcome: string; runId?: undefined; sessionId?: undefined };

/** The durable record behind every approval: opened by a run, decided once. */
export interface HitlRecords {
  /** Opens a request, once: asking again returns the status it has. */
  open(record: Omit<HitlRecord, 'status' | 'message'>): Promise<HitlStatus>;
  get(requestId: string): Promise<HitlRecord | null>;
  /**
   * Decides a pending request, once: by its owner before its deadline, or by the system (`owner` null) whatever the time.
   */
  decide(requestId: string, owner: RunOwner | null, status: Exclude<HitlStatus, 'pending'>, message?: string): Promise<DecideOutcome>;
  /** Whether the person chose "approve all" for the session's calls. */
  isApproveAll(sessionId: string): Promise<boolean>;
}

// ── the rest ────────────────────────────────────────────────────────────────

/** A run as the lifecycle needs to know it. */
export interface RunRef {
  runId: string;
  sessionId: string;
  tenantId: string;
}

/** Tenants' concurrent-run slots: a run gives its slot back when it ends. */
export interface RunSlots {
  release(tenantId: string, runId: string): Promise<void>;
}

/** A run as its budgets see it: whose it is, the budgets that apply to it, how its calls are priced. */
export interface BudgetedRun {
  runId: string;
  tenantId: string;
  userId: string;
  /** The tenant's time zone: where its days and months start. */
  timeZone: string;
  /** The tenant's and the person's budgets (budgetsFor); none, and the run reserves nothing. */
  budgets: readonly BudgetDefinition[];
  prices: PriceTable;
  now?: () => Date;
}

/**
 * The reservations runs' model calls hold on their tenant's and person's budgets, shared by every
 * worker. A run lists what it holds, so what a dead worker reserved (or a call never settled) is
 * given back when another worker takes the run, or when it ends.
 */
export interface RunBudgets {
  /** The budget one run's model calls draw on: each call reserves before it and settles after. */
  forRun(run: BudgetedRun): ModelCallBudget;
  /** Gives back every reservation the run still holds. @returns how many there were. */
  release(run: Pick<RunRef, 'runId' | 'tenantId'>): Promise<number>;
}

/** Runs' events as they are appended, to whoever watches a run here. */
export interface RunRelay {
  /** @returns a function that stops watching. */
  watch(runId: string, listener: (event: EventDict, raw: string) => void): Promise<() => void>;
}

/** The deadlines of parked runs' questions, swept so a parked run (which holds no worker) still expires on time. */
export interface ParkedDeadlines {
  add(run: RunRef, deadline: number): Promise<void>;
}

/** A run's rows and the archive of its events: the parts of the conversation store a run writes. */
export type RunRows = Pick<ConversationStore, 'runs' | 'submissions' | 'events' | 'messages' | 'sessions'>;

/** Writes that must outlive a database outage: written now, or kept and written once it is back. */
export interface DurableWrites {
  /** @returns true when written now, false when kept for later. */
  run(name: string, write: () => Promise<void>): Promise<boolean>;
}

/** Where the lifecycle reports what it could not do and carried on without. */
export interface RunLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
