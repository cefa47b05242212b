import type { ApprovalRequest, Decision, HitlHandler } from '#core/hitl/hitl-handler.js';
import type { ActionRequest } from '#core/events/execution-event.js';
import type { Approver } from './approver.js';

/**
 * The local agent's approvals with a person at the terminal: each call that needs approval is
 * asked about; `approve_all` lets the rest of that session's calls run without asking.
 */
export class InteractiveApprovals implements HitlHandler {
  private readonly approvedSessions = new Set<string>();

  constructor(private readonly ask: Approver) {}

  async open(request: ApprovalRequest): Promise<'ask' | 'approved'> {
    return this.approvedSessions.has(request.sessionId) ? 'approved' : 'ask';
  }

  async requestApproval(action: ActionRequest, sessionId: string, signal: AbortSignal, requestId = ''): Promise<Decision> {
    const answer = await this.ask({ requestId, action }, signal);
    if (answer === 'approve_all') this.approvedSessions.add(sessionId);
    // Without tellModel a rejection ends the run, shown as cancelled.
    return answer === 'reject' ? { type: 'reject', message: `${action.name} was rejected at the terminal` } : { type: 'approve' };
  }
}
