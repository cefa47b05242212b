import type { ActionRequest } from '../events/execution-event.js';

export interface Decision {
  type: 'approve' | 'reject';
  message?: string;
}

export interface ApprovalRequest {
  requestId: string;
  runId: string;
  sessionId: string;
  action: ActionRequest;
  /** SHA-256 of the call's canonical arguments: the approval is bound to them and to the tool name. */
  argsHash?: string;
}

/** Asks a person whether a sensitive action may run (seed 002, Req 3). */
export interface HitlHandler {
  /**
   * Records a request before the client is told about it, so an immediate answer finds
   * it. Returns 'approved' when no question is needed (the session approved everything),
   * 'decided' when the request was already answered (asked by an earlier attempt of the run:
   * the decision is applied without asking again).
   */
  open?(request: ApprovalRequest): Promise<'ask' | 'approved' | 'decided'>;
  /** Waits for the decision; a timeout or cancel counts as reject. */
  requestApproval(actionRequest: ActionRequest, sessionId: string, signal: AbortSignal, requestId?: string): Promise<Decision>;
}

/** With no handler configured every action is approved. */
export const AUTO_APPROVE: HitlHandler = {
  requestApproval: async () => ({ type: 'approve' }),
};

/** Which calls need a person's approval. */
export type ApprovalPolicy = (toolName: string, args: Record<string, unknown>, toolSaysSensitive: boolean) => boolean;

/** Default: the tool's own sensitivity; a configured list of names replaces it ("none": nothing). */
export function approvalPolicy(configured?: readonly string[]): ApprovalPolicy {
  if (!configured || configured.length === 0) return (_name, _args, sensitive) => sensitive;
  const names = new Set(configured);
  if (names.has('none')) return () => false;
  return (name) => names.has(name);
}
