import { ACTIVE_RUN_STATES, allMoves, canMove, IllegalRunTransition, isFinal, move, type RunState } from './run-state.js';

const STATES: RunState[] = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'lost', 'timeout'];

/** The machine as docs/run-states.md draws it: every move it has, and no other. */
const DRAWN: Array<[RunState, RunState]> = [
  ['queued', 'running'],
  ['queued', 'failed'],
  ['queued', 'cancelled'],
  ['queued', 'lost'],
  ['running', 'waiting'],
  ['running', 'completed'],
  ['running', 'failed'],
  ['running', 'cancelled'],
  ['running', 'lost'],
  ['running', 'timeout'],
  ['waiting', 'running'],
  ['waiting', 'failed'],
  ['waiting', 'cancelled'],
  ['waiting', 'lost'],
  ['waiting', 'timeout'],
];

describe('run states', () => {
  it('has exactly the drawn moves', () => {
    expect(allMoves().map(([a, b]) => `${a}→${b}`).sort()).toEqual(DRAWN.map(([a, b]) => `${a}→${b}`).sort());
  });

  it.each(STATES.flatMap((from) => STATES.map((to) => [from, to] as const)))('%s → %s is allowed only when drawn', (from, to) => {
    const drawn = DRAWN.some(([a, b]) => a === from && b === to);
    expect(canMove(from, to)).toBe(drawn);
    if (drawn) expect(move('r', from, to)).toBe(to);
    else expect(() => move('r', from, to)).toThrow(IllegalRunTransition);
  });

  it('ends once: a final state has no move, an active one has', () => {
    for (const state of STATES) expect(isFinal(state)).toBe(!ACTIVE_RUN_STATES.includes(state));
    expect(() => move('r', 'completed', 'cancelled')).toThrow('run r cannot go from completed to cancelled');
  });
});
