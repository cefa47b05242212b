import { InputHistory } from './input-history.js';

describe('InputHistory', () => {
  it('skips blank entries and a repeat of the newest one', () => {
    const history = new InputHistory();
    for (const entry of ['a', ' ', 'a', 'b']) history.push(entry);
    expect(history.older('')).toBe('b');
    expect(history.older('')).toBe('a');
    expect(history.older('')).toBeUndefined();
  });

  it('is not walking after a push: down does nothing', () => {
    const history = new InputHistory();
    history.push('a');
    expect(history.newer()).toBeUndefined();
  });
});
