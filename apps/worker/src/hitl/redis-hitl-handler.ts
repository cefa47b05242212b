import type { ActionRequest } from '#core/events/execution-event.js';
import { isHandoff, type ParkedWait } from '#core/engine/run-journal.js';
import type { ApprovalRequest, Decision, HitlHandler } from '#core/hitl/hitl-handler.js';
import type { Caller } from '#core/auth/caller.js';
import type { DecisionWaiters } from './decision-waiters.js';
import { TIMED_OUT_MESSAGE, type HitlRecord, type HitlRecords } from '#core/run/run-ports.js';

export interface RedisHitlOptions {
  /** How long a question waits before it counts as rejected. */
  timeoutMs: number;
  /**
   * How long a run waits for the answer on this worker before it parks (gives its worker slot
   * back and continues wherever the answer, or the expiry, finds a worker); absent: never parks.
   */
  parkAfterMs?: number;
  /** Parks the run (it stops here and continues from its ledger when the wait is over). */
  park?: (wait: ParkedWait) => void;
}

const TIMED_OUT: Decision = { type: 'reject', message: TIMED_OUT_MESSAGE, timedOut: true };

/**
 * The web HITL handler: records each request in Redis, then waits for the owner's decision
 * (control message, with the record checked too), for a short while on this worker and then
 * parked, holding no worker. No decision by the request's deadline counts as reject; the
 * deadline is the one first recorded, so a run that parks and continues keeps it.
 */
export class RedisHitlHandler implements HitlHandler {
  readonly timeoutMs: number;

  constructor(
    private readonly requests: HitlRecords,
    private readonly waiters: DecisionWaiters,
    private readonly caller: Caller,
    private readonly options: RedisHitlOptions,
  ) {
    this.timeoutMs = options.timeoutMs;
  }

  private readonly bound = new Map<string, { tool: string; argsHash?: string; toolCallId?: string }>();

  async open(request: ApprovalRequest): Promise<'ask' | 'approved' | 'decided'> {
    if (await this.requests.isApproveAll(request.sessionId)) return 'approved';
    const { requestId, runId, sessionId, action, argsHash, expiresAt, toolCallId } = request;
    this.bound.set(requestId, { tool: action.name, argsHash, toolCallId });
    const status = await this.requests.open({ requestId, runId, sessionId, tenantId: this.caller.tenantId, userId: this.caller.userId, tool: action.name, argsHash, expiresAt: expiresAt ?? Date.now() + this.timeoutMs });
    return status === 'pending' ? 'ask' : 'decided';
  }

  async requestApproval(_action: ActionRequest, _sessionId: string, signal: AbortSignal, requestId?: string): Promise<Decision> {
    if (!requestId) return { type: 'reject', message: 'No request id' };
    const bound = this.bound.get(requestId);
    this.bound.delete(requestId);
    // Redis failing here must not leave the run waiting forever: a failed read is no decision
    // yet (the deadline still comes), a failed expiry write is a rejection.
    const decisionOf = (record: HitlRecord | null): Decision | null => {
      if (!record || record.status === 'pending') return null;
      // A decision approves the call it was asked about, never another one under the same id.
      if (bound && (record.tool !== bound.tool || record.argsHash !== bound.argsHash)) return { type: 'reject', message: 'The decision was for another call' };
      if (record.status === 'timeout') return { ...TIMED_OUT, message: record.message || TIMED_OUT_MESSAGE };
      return record.status === 'approve' ? { type: 'approve', message: record.message } : { type: 'reject', message: record.message || `Request ${record.status}` };
    };
    const read = async () => decisionOf(await this.requests.get(requestId).catch(() => null));
    const expire = async (): Promise<Decision> => {
      try {
        // A decision may land at the same moment: the compare-and-set decides which wins.
        const { outcome } = await this.requests.decide(requestId, null, 'timeout', TIMED_OUT_MESSAGE);
        return outcome === 'ok' ? TIMED_OUT : ((await read()) ?? TIMED_OUT);
      } catch {
        return TIMED_OUT;
      }
    };

    const record = await this.requests.get(requestId).catch(() => null);
    const known = decisionOf(record);
    if (known) return known;
    const deadline = record?.expiresAt ?? Date.now() + this.timeoutMs;
    if (Date.now() >= deadline) return expire();
    const { parkAfterMs, park } = this.options;
    const parks = park !== undefined && parkAfterMs !== undefined && Date.now() + parkAfterMs < deadline;

    let stopWaiting = () => {};
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    try {
      return await new Promise<Decision>((resolve) => {
        stopWaiting = this.waiters.add(requestId, () => void read().then((d) => d && resolve(d)));
        onAbort = () => {
          // A run handed to another worker, or parked, keeps its question open.
          if (!isHandoff(signal)) void this.requests.decide(requestId, null, 'cancelled').catch(() => undefined);
          resolve({ type: 'reject', message: 'Run cancelled' });
        };
        signal.addEventListener('abort', onAbort, { once: true });
        if (signal.aborted) return onAbort();
        timer = parks
          ? setTimeout(() => park!({ requestId, toolCallId: bound?.toolCallId ?? '', until: deadline }), parkAfterMs)
          : setTimeout(() => void expire().then(resolve), Math.max(0, deadline - Date.now()));
        // The decision may have been recorded before we started listening.
        void read().then((d) => d && resolve(d));
      });
    } finally {
      stopWaiting();
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
