import type { ActionRequest } from '../events/execution-event.js';

export interface Decision {
  type: 'approve' | 'reject';
  message?: string;
}

/** Asks a person whether a sensitive action may run (seed 002, Req 3). */
export interface HitlHandler {
  requestApproval(actionRequest: ActionRequest, sessionId: string, signal: AbortSignal): Promise<Decision>;
}

/** With no handler configured every action is approved. */
export const AUTO_APPROVE: HitlHandler = {
  requestApproval: async () => ({ type: 'approve' }),
};
