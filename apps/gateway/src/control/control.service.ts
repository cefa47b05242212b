import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { ControlBus } from '#transport/control-bus.js';
import { HitlRequests } from '#transport/hitl-requests.js';
import { RunLifecycle, type RunRef } from '#transport/run-lifecycle.js';
import { Metrics, secondsSince } from '#telemetry/metrics.js';
import { ApiError } from '../common/api-error.js';
import type { CancelAnswer, HitlDecisionAnswer } from './control-answers.dto.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS, STORE } from '../infra/tokens.js';
import { SessionAccess } from '../sessions/session-access.service.js';

export type HitlDecisionType = 'approve' | 'reject' | 'approve_all';

/**
 * Control messages from any gateway to whichever worker holds a run. Each is recorded
 * durably first (cancel key, HITL record), then published.
 */
@Injectable()
export class ControlService {
  constructor(
    @Inject(SETTINGS) private readonly settings: GatewaySettings,
    @Inject(STORE) private readonly store: ConversationStore,
    private readonly access: SessionAccess,
    private readonly lifecycle: RunLifecycle,
    private readonly bus: ControlBus,
    private readonly hitl: HitlRequests,
    private readonly metrics: Metrics,
  ) {}

  /**
   * Cancels the session's active runs: a queued one is removed from the queue and ended
   * here; a running one is aborted by its worker. Either way it ends with done{cancelled}.
   * @throws ApiError 404 for an unknown or foreign session.
   */
  async cancelSession(caller: Caller, sessionId: string): Promise<CancelAnswer> {
    // The runs this caller started in the session, from Redis: a burst of cancels (or a database
    // outage) does not wait on MySQL. The caller started them, so the session is theirs.
    let active = await this.lifecycle.activeRunsOf(sessionId, caller);
    if (active.length === 0) {
      // None there: the session may be foreign or unknown (404), or its runs predate Redis's copy.
      const [, stored] = await Promise.all([this.access.getOwned(caller, sessionId), this.store.runs.listActive(sessionId)]);
      active = stored.map((run) => run.runId);
    }
    const ended = await Promise.all(active.map((runId) => this.cancelRun({ runId, sessionId, tenantId: caller.tenantId })));
    const cancelled = active.filter((_, i) => ended[i]);
    if (cancelled.length === 0) return { session_id: sessionId, cancelled: false, run_ids: [], reason: 'no_active_run' };
    return { session_id: sessionId, cancelled: true, run_ids: cancelled };
  }

  /** Cancels a run this gateway started for a client that has gone away (ownership is known). Returns false when it had finished. */
  cancelStarted(run: RunRef): Promise<boolean> {
    return this.cancelRun(run);
  }

  /** Returns false when the run had already finished. */
  private async cancelRun(run: RunRef): Promise<boolean> {
    const requestedAt = Date.now();
    const outcome = await this.lifecycle.cancel(run);
    if (outcome === 'finished') return false;
    if (outcome === 'ended_queued') {
      // No worker held it (queued, or parked waiting for a person): the lifecycle ended it.
      this.metrics.runsFinished.labels('cancelled').inc();
      this.metrics.cancelLatency.labels('queued').observe(secondsSince(requestedAt));
      return true;
    }
    // The worker times the cancel from here to the run's done.
    await this.bus.publish({ type: 'cancel', run_id: run.runId, requested_at: requestedAt });
    return true;
  }

  /**
   * Records the owner's decision on a pending HITL request, once.
   * @throws ApiError 404 (unknown or another user's request), 409 (already decided or expired).
   */
  async decide(caller: Caller, requestId: string, decision: HitlDecisionType, message = ''): Promise<HitlDecisionAnswer> {
    const decided = await this.hitl.decide(requestId, caller, decision === 'reject' ? 'reject' : 'approve', message);
    if (decided.outcome === 'missing') throw ApiError.notFound('hitl_request', requestId);
    if (decided.outcome !== 'ok') {
      const status = decided.outcome.replace('decided:', '');
      throw new ApiError(409, 'hitl_already_decided', `This request was already decided (${status})`, { request_id: requestId, status });
    }
    if (decision === 'approve_all') {
      const { hitlApproveAllSeconds, sessionTimeoutSeconds } = this.settings.server;
      await this.hitl.approveAll(decided.sessionId!, Math.ceil(hitlApproveAllSeconds ?? sessionTimeoutSeconds));
    }
    // A run waiting on this worker hears the message; a parked one goes back to the queue.
    await Promise.all([this.bus.publish({ type: 'hitl_decision', request_id: requestId, run_id: decided.runId! }), this.lifecycle.wake(decided.runId!)]);
    return { request_id: requestId, decision, accepted: true };
  }
}
