import type { HitlHandler } from '#core/hitl/hitl-handler.js';
import type { ApprovalMode } from './approval-mode.js';

/**
 * The local agent's approvals without a terminal to ask in: every call is approved up front,
 * or the request is shown (a `hitl_request` event) and rejected, which ends the run.
 */
export function nonInteractiveApprovals(mode: ApprovalMode): HitlHandler {
  if (mode === 'approve_all') return { open: async () => 'approved', requestApproval: async () => ({ type: 'approve' }) };
  return {
    open: async () => 'ask',
    requestApproval: async (action) => ({ type: 'reject', message: `${action.name} needs approval, and nobody can be asked without a terminal` }),
  };
}
