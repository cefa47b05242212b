/**
 * A run's states and the moves between them:
 *
 *   queued ──► running ◄──► waiting          (waiting: for a person; it holds no worker)
 *     │          │            │
 *     └──────────┴────────────┴──► completed | failed | cancelled | lost | timeout
 *
 * A run that changes worker (a takeover, a drain) stays running. `lost` is a run nobody
 * holds any more (its job is gone) that the reaper ended. `timeout` is a run whose question
 * nobody answered by its deadline (running on its worker, or parked).
 */
export type RunState = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled' | 'lost' | 'timeout';

/** The states a run ends in: each is reached once, and nothing follows it. */
export type FinalRunState = Extract<RunState, 'completed' | 'failed' | 'cancelled' | 'lost' | 'timeout'>;

/** The states of a run that has not ended. */
export const ACTIVE_RUN_STATES: readonly RunState[] = ['queued', 'running', 'waiting'];

const MOVES: Readonly<Record<RunState, readonly RunState[]>> = {
  queued: ['running', 'failed', 'cancelled', 'lost'],
  running: ['waiting', 'completed', 'failed', 'cancelled', 'lost', 'timeout'],
  waiting: ['running', 'failed', 'cancelled', 'lost', 'timeout'],
  completed: [],
  failed: [],
  cancelled: [],
  lost: [],
  timeout: [],
};

/** A move the state machine does not have (e.g. a second end, or a finished run started again). */
export class IllegalRunTransition extends Error {
  constructor(
    readonly runId: string,
    readonly from: RunState,
    readonly to: RunState,
  ) {
    super(`run ${runId} cannot go from ${from} to ${to}`);
    this.name = 'IllegalRunTransition';
  }
}

/** Whether the state machine has the move `from` → `to`. */
export function canMove(from: RunState, to: RunState): boolean {
  return MOVES[from].includes(to);
}

/**
 * The state after a move.
 * @throws IllegalRunTransition when the machine has no such move.
 */
export function move(runId: string, from: RunState, to: RunState): RunState {
  if (!canMove(from, to)) throw new IllegalRunTransition(runId, from, to);
  return to;
}

/**
 * The states a run may reach `to` from: what a row's compare-and-set accepts. Every writer of a
 * row's state (the MySQL and memory stores) takes its condition from here, so a row moves only
 * along the table's edges (a queued run is not completed without running).
 */
export function fromStates(to: RunState): RunState[] {
  return (Object.keys(MOVES) as RunState[]).filter((from) => MOVES[from].includes(to));
}

export function isFinal(state: RunState): state is FinalRunState {
  return MOVES[state].length === 0;
}

/** Every move the machine has, for docs and tests. */
export function allMoves(): Array<[RunState, RunState]> {
  return (Object.keys(MOVES) as RunState[]).flatMap((from) => MOVES[from].map((to) => [from, to] as [RunState, RunState]));
}
