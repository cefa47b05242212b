import { applyPatch } from 'diff';
import { FileOpTracker, fileOperationEvent } from './file-op-tracker.js';

describe('FileOpTracker', () => {
  it('describes a new file as all additions against /dev/null', () => {
    const record = new FileOpTracker().track('create', 'files/a.txt', null, 'one\ntwo\n');
    expect(record).toEqual({
      operation: 'create',
      path: 'files/a.txt',
      diff: '--- /dev/null\n+++ b/files/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n',
      stats: { additions: 2, deletions: 0 },
    });
  });

  it('produces a unified diff that turns the old content into the new one', () => {
    const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join('\n') + '\n';
    const after = before.replace('b\n', 'B\n').replace('i\n', '') + 'k\n';
    const record = new FileOpTracker().track('edit', 'notes.md', before, after);
    expect(record.stats).toEqual({ additions: 2, deletions: 2 });
    expect(record.diff).toContain('--- a/notes.md\n+++ b/notes.md\n');
    expect(record.diff).toContain('-b\n+B\n');
    expect(applyPatch(before, record.diff)).toBe(after);
  });

  it('reports no change with an empty diff', () => {
    expect(new FileOpTracker().track('write', 'x', 'same\n', 'same\n')).toMatchObject({ diff: '', stats: { additions: 0, deletions: 0 } });
  });

  it('cuts very long diffs but keeps exact stats', () => {
    const after = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n');
    const record = new FileOpTracker({ maxDiffChars: 1000 }).track('create', 'big.txt', null, after);
    expect(record.diff.length).toBeLessThan(1100);
    expect(record.diff).toContain('(diff truncated)');
    expect(record.stats.additions).toBe(5000);
  });

  it('keeps a bounded history and builds the file_operation event', () => {
    const tracker = new FileOpTracker({ historyLimit: 2 });
    tracker.track('create', 'a', null, 'a');
    tracker.track('create', 'b', null, 'b');
    const last = tracker.track('write', 'b', 'b', 'bb');
    expect(tracker.operations().map((r) => r.path)).toEqual(['b', 'b']);
    expect(fileOperationEvent({ sessionId: 's', runId: 'r' }, last).toDict()).toMatchObject({
      event_type: 'file_operation',
      operation: 'write',
      path: 'b',
      stats: { additions: 1, deletions: 1 },
    });
  });
});
