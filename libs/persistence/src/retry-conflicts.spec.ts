import { retryConflicts } from './retry-conflicts.js';

const failing = (errnos: number[]) => {
  let calls = 0;
  const run = async () => {
    const errno = errnos[calls++];
    if (errno === undefined) return 'written';
    throw Object.assign(new Error(`errno ${errno}`), { errno });
  };
  return { run, calls: () => calls };
};

describe('retryConflicts', () => {
  it('runs a transaction again after a deadlock or a lock wait timeout', async () => {
    const tx = failing([1213, 1205, 1213]);
    await expect(retryConflicts(tx.run)).resolves.toBe('written');
    expect(tx.calls()).toBe(4);
  });

  it('gives up after five attempts with the last error', async () => {
    const tx = failing([1213, 1213, 1213, 1213, 1213, 1213]);
    await expect(retryConflicts(tx.run)).rejects.toThrow('errno 1213');
    expect(tx.calls()).toBe(5);
  });

  it('throws any other error at once, unless the caller names it', async () => {
    const duplicate = failing([1062]);
    await expect(retryConflicts(duplicate.run)).rejects.toThrow('errno 1062');
    expect(duplicate.calls()).toBe(1);
    const named = failing([1062]);
    await expect(retryConflicts(named.run, [1062])).resolves.toBe('written');
  });
});
