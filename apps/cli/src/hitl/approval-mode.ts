/**
 * How a run without a person at the keyboard answers approval requests: `reject` ends the run
 * at the first call that needs approval; `approve_all` lets every call run.
 */
export type ApprovalMode = 'reject' | 'approve_all';

/** Told after a rejected run, in both modes, so the person knows how to let the call run. */
export const REJECTED_HINT = 'a call needed approval and nobody can be asked without a terminal: run again with --approve-all (or --yes) to allow it';
