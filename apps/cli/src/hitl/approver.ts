import type { ActionRequest } from '#core/events/execution-event.js';

/** What the person at the terminal answers a `hitl_request` with: the gateway's decision values. */
export type ApprovalAnswer = 'approve' | 'reject' | 'approve_all';

export const APPROVAL_ANSWERS: readonly ApprovalAnswer[] = ['approve', 'reject', 'approve_all'];

/** A call waiting for approval, as the terminal shows it. */
export interface ApprovalQuestion {
  requestId: string;
  action: ActionRequest;
}

/**
 * Asks the person at the terminal (the interactive UI). Resolves to their answer; an aborted
 * `signal` (the run was cancelled) resolves to `reject`.
 */
export type Approver = (question: ApprovalQuestion, signal: AbortSignal) => Promise<ApprovalAnswer>;
