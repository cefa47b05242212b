import { diffLines } from './diff-lines.js';

const DIFF = ['--- a/files/x.csv', '+++ b/files/x.csv', '@@ -1,2 +1,2 @@', ' id,name', '-1,old', '+1,new', '\\ No newline at end of file', ''].join('\n');

describe('diffLines', () => {
  it('keeps hunks and their lines, typed for colour, without the file headers', () => {
    expect(diffLines(DIFF)).toEqual([
      { kind: 'hunk', text: '@@ -1,2 +1,2 @@' },
      { kind: 'context', text: ' id,name' },
      { kind: 'remove', text: '-1,old' },
      { kind: 'add', text: '+1,new' },
    ]);
  });

  it('cuts a long diff and says how much is left out', () => {
    const long = ['@@ -0,0 +1,5 @@', ...['a', 'b', 'c', 'd', 'e'].map((l) => `+${l}`)].join('\n');
    const lines = diffLines(long, 3);
    expect(lines).toHaveLength(4);
    expect(lines.at(-1)).toEqual({ kind: 'note', text: '… 3 more lines' });
  });
});
