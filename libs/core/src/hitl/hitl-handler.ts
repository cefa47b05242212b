import type { ActionRequest } from '../events/execution-event.js';

export interface Decision {
  type: 'approve' | 'reject';
  message?: string;
  /**
   * A rejection the model is told of, after which the run goes on (the call's result says it
   * was refused); without it a rejection ends the run.
   */
  tellModel?: boolean;
  /** A rejection because nobody decided by the request's deadline: the call's result and the run's end say `timeout`. */
  timedOut?: boolean;
}

export interface ApprovalRequest {
  requestId: string;
  runId: string;
  sessionId: string;
  action: ActionRequest;
  /** SHA-256 of the call's canonical arguments: the approval is bound to them and to the tool name. */
  argsHash?: string;
  /** When the question expires (epoch ms), as its hitl_request event says; absent: never. */
  expiresAt?: number;
  /** The call the request is about. */
  toolCallId?: string;
}

/** Asks a person whether a sensitive action may run, so nothing that changes the world runs unseen. */
export interface HitlHandler {
  /**
   * Records a request before the client is told about it, so an immediate answer finds
   * it. Returns 'approved' when no question is needed (the session approved everything),
   * 'decided' when the request was already answered (asked by an earlier attempt of the run:
   * the decision is applied without asking again).
   */
  open?(request: ApprovalRequest): Promise<'ask' | 'approved' | 'decided'>;
  /** How long a question waits before it counts as rejected; the hitl_request event then carries its `expires_at`. */
  readonly timeoutMs?: number;
  /** Waits for the decision; a timeout or cancel counts as reject. */
  requestApproval(actionRequest: ActionRequest, sessionId: string, signal: AbortSignal, requestId?: string): Promise<Decision>;
}

/**
 * Nobody is there to ask (the OpenAI-compatible API): each call that needs approval is refused,
 * the model is told so, and the run goes on.
 */
export const REFUSE_APPROVALS: HitlHandler = {
  // Nobody to show a request to: no hitl_request event.
  open: async () => 'decided',
  requestApproval: async () => ({
    type: 'reject',
    message: 'This call needs a person to approve it, and nobody can be asked on this connection; it did not run. Answer without it, or tell the person to use the DataAgent app to approve it.',
    tellModel: true,
  }),
};

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
