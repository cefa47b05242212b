import type { ActionRequest } from '#core/events/execution-event.js';
import { isHandoff } from '#core/engine/run-journal.js';
import type { ApprovalRequest, Decision, HitlHandler } from '#core/hitl/hitl-handler.js';
import type { Caller } from '#core/auth/caller.js';
import type { HitlRequests } from '#transport/hitl-requests.js';
import type { DecisionWaiters } from './decision-waiters.js';

/**
 * The web HITL handler: records each request in Redis, then waits for the owner's
 * decision (control message, with the record checked too). No decision within the
 * timeout counts as reject.
 */
export class RedisHitlHandler implements HitlHandler {
  constructor(
    private readonly requests: HitlRequests,
    private readonly waiters: DecisionWaiters,
    private readonly caller: Caller,
    readonly timeoutMs: number,
  ) {}

  private readonly bound = new Map<string, { tool: string; argsHash?: string }>();

  async open(request: ApprovalRequest): Promise<'ask' | 'approved' | 'decided'> {
    if (await this.requests.isApproveAll(request.sessionId)) return 'approved';
    const { requestId, runId, sessionId, action, argsHash } = request;
    this.bound.set(requestId, { tool: action.name, argsHash });
    const status = await this.requests.open({ requestId, runId, sessionId, tenantId: this.caller.tenantId, userId: this.caller.userId, tool: action.name, argsHash });
    return status === 'pending' ? 'ask' : 'decided';
  }

  async requestApproval(_action: ActionRequest, _sessionId: string, signal: AbortSignal, requestId?: string): Promise<Decision> {
    if (!requestId) return { type: 'reject', message: 'No request id' };
    // Redis failing here must not leave the run waiting forever: a failed read is no decision
    // yet (the timeout still comes), a failed timeout write is a rejection.
    const bound = this.bound.get(requestId);
    this.bound.delete(requestId);
    const read = async (): Promise<Decision | null> => {
      const record = await this.requests.get(requestId).catch(() => null);
      if (!record || record.status === 'pending') return null;
      // A decision approves the call it was asked about, never another one under the same id.
      if (bound && (record.tool !== bound.tool || record.argsHash !== bound.argsHash)) return { type: 'reject', message: 'The decision was for another call' };
      return record.status === 'approve' ? { type: 'approve', message: record.message } : { type: 'reject', message: record.message || `Request ${record.status}` };
    };
    let stopWaiting = () => {};
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    try {
      return await new Promise<Decision>((resolve) => {
        stopWaiting = this.waiters.add(requestId, () => void read().then((d) => d && resolve(d)));
        onAbort = () => {
          // A run handed to another worker keeps its question open there.
          if (!isHandoff(signal)) void this.requests.decide(requestId, null, 'cancelled').catch(() => undefined);
          resolve({ type: 'reject', message: 'Run cancelled' });
        };
        signal.addEventListener('abort', onAbort, { once: true });
        timer = setTimeout(async () => {
          const timedOut: Decision = { type: 'reject', message: 'No decision in time' };
          try {
            // A decision may land at the same moment: the compare-and-set decides which wins.
            const { outcome } = await this.requests.decide(requestId, null, 'timeout', 'No decision in time');
            resolve(outcome === 'ok' ? timedOut : (await read()) ?? timedOut);
          } catch {
            resolve(timedOut);
          }
        }, this.timeoutMs);
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
