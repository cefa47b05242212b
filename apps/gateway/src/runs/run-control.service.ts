import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '#core/auth/caller.js';
import type { ElicitationAction } from '#core/events/execution-event.js';
import { checkElicitationContent } from '#core/hitl/elicitation.js';
import type { ConversationStore } from '#core/session/session-store.js';
import { ControlBus } from '#transport/control-bus.js';
import { ElicitationRequests } from '#transport/elicitation-requests.js';
import { HitlRequests } from '#transport/hitl-requests.js';
import { RunLifecycle, type RunRef } from '#core/run/run-lifecycle.js';
import { Metrics, secondsSince } from '#telemetry/metrics.js';
import { ApiError } from '../common/api-error.js';
import type { CancelAnswer, HitlDecisionAnswer } from './control-answers.dto.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS, STORE } from '../infra/tokens.js';
import { SessionAccess } from '../sessions/session-access.service.js';
import { invalidFields } from '../common/validation.js';

export type HitlDecisionType = 'approve' | 'reject' | 'approve_all';

export interface ElicitationAnswerResult {
  request_id: string;
  action: ElicitationAction;
  /** What the server gets: the accepted form with its defaults filled in. */
  content?: Record<string, unknown>;
  accepted: true;
}

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
    private readonly elicitations: ElicitationRequests,
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
   * Records the owner's decision on a pending HITL request, once, and only before its deadline
   * (the decide script compares it with Redis's clock in the same step that decides, so a late
   * approval is never recorded, whichever door it came through).
   * @throws ApiError 404 (unknown or another user's request), 409 `timeout` (its deadline has
   *   passed), 409 `hitl_already_decided` (decided or cancelled already).
   */
  async decide(caller: Caller, requestId: string, decision: HitlDecisionType, message = ''): Promise<HitlDecisionAnswer> {
    const decided = await this.hitl.decide(requestId, caller, decision === 'reject' ? 'reject' : 'approve', message);
    if (decided.outcome === 'missing') throw ApiError.notFound('hitl_request', requestId);
    if (decided.outcome === 'expired' || decided.outcome === 'decided:timeout') throw hitlTimedOut(requestId);
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

  /**
   * Records the owner's answer to a pending elicitation, once: `accept` of a form with its
   * content (fields left out take the schema's defaults, then the whole is checked against
   * the schema), `accept` of a URL, `decline` or `cancel` (no content).
   * @throws ApiError 404 (unknown or another user's request), 409 (answered or expired already),
   *   422 (content that does not fit the form, or content where none is taken).
   */
  async answerElicitation(caller: Caller, requestId: string, action: ElicitationAction, content?: Record<string, unknown>): Promise<ElicitationAnswerResult> {
    const record = await this.elicitations.get(requestId);
    if (!record || record.tenantId !== caller.tenantId || record.userId !== caller.userId) throw ApiError.notFound('elicitation_request', requestId);
    if (record.status !== 'pending') throw answeredAlready(requestId, record.status, record.reason);
    let filled: Record<string, unknown> | undefined;
    if (action === 'accept' && record.mode === 'form') {
      const checked = checkElicitationContent(record.requestedSchema ?? { type: 'object', properties: {} }, content ?? {});
      if (!checked.ok) {
        throw invalidFields(Object.fromEntries(checked.fields.map((f) => [f.field, [f.problem]])), 'invalid_elicitation_content', { request_id: requestId, requested_schema: record.requestedSchema });
      }
      filled = checked.content;
    } else if (content !== undefined) {
      const takes = action === 'accept' ? 'A URL elicitation is accepted without content' : `A ${action} carries no content`;
      throw new ApiError(422, 'elicitation_content_not_allowed', `${takes}; leave content out`, { request_id: requestId, action, mode: record.mode });
    }
    const answered = await this.elicitations.answer(requestId, { ...caller, now: Date.now() }, action, filled);
    if (answered.outcome === 'missing') throw ApiError.notFound('elicitation_request', requestId);
    if (answered.outcome === 'expired') throw answeredAlready(requestId, 'cancel', 'expired');
    if (answered.outcome !== 'ok') throw answeredAlready(requestId, answered.outcome.replace('answered:', ''));
    // The run waits on its worker (an elicitation never parks): the message wakes it there.
    await this.bus.publish({ type: 'elicitation_answer', request_id: requestId, run_id: answered.runId! });
    return { request_id: requestId, action, ...(filled ? { content: filled } : {}), accepted: true };
  }
}

/** The answer to a decision that came after its request's deadline: the request ended unanswered (`timeout`). */
export function hitlTimedOut(requestId: string): ApiError {
  return new ApiError(409, 'timeout', 'This request expired before it was decided: it counts as rejected and nothing was run', { request_id: requestId, status: 'timeout' });
}

function answeredAlready(requestId: string, status: string, reason?: string): ApiError {
  const why = reason === 'expired' ? 'it expired and counts as cancel' : `it was answered already (${status})`;
  return new ApiError(409, 'elicitation_already_answered', `This elicitation takes no more answers: ${why}`, { request_id: requestId, status, ...(reason ? { reason } : {}) });
}
