import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Every dialect streams a run through pipeRunEvents (run-event-stream.ts): ordered writes, the
 * slow-client limit, leave-is-not-stop. A dialect that writes a stream itself skips all three.
 */
const HAND_WRITES = /\b(res|response)\.(write|flushHeaders)\(|startEventStream\(/;

const DIALECTS = join(import.meta.dirname, '../dialects');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The dialect files that write to a response themselves. */
export function handWriters(files: Array<{ path: string; text: string }>): string[] {
  return files.filter((file) => HAND_WRITES.test(file.text)).map((file) => file.path);
}

describe('one stream writer', () => {
  const files = sources(DIALECTS).map((path) => ({ path: relative(DIALECTS, path), text: readFileSync(path, 'utf8') }));

  it('no dialect writes a response stream itself', () => {
    expect(files.filter((f) => f.path.endsWith('.controller.ts')).length).toBeGreaterThanOrEqual(8);
    expect(handWriters(files)).toEqual([]);
  });

  it('names a dialect that does', () => {
    expect(handWriters([{ path: 'openai-chat/x.controller.ts', text: "res.write('data: {}\\n\\n');" }])).toEqual(['openai-chat/x.controller.ts']);
  });
});
