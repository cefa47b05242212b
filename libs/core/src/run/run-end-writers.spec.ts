import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Only the run lifecycle writes a run's end: its row's state, its done, its tenant slot, the
 * archive hand-off. These are the calls that do it; a file other than the lifecycle that makes
 * one is a second writer (the bug this rule exists for: five writers in three packages).
 */
const WRITES: Array<{ what: string; call: RegExp }> = [
  { what: "a run row's state", call: /\.(markFinished|markWaiting|markStarted|startMany|finishMany)\(/ },
  { what: 'a done', call: /new DoneEvent\(/ },
  { what: "a run's tenant slot", call: /[sS]lots\??\.release\(/ },
  { what: 'the archive hand-off', call: /\bevents\.appendBatch\(/ },
];

const OWNER = 'libs/core/src/run/run-lifecycle.ts';

/** Files that define or compose these operations rather than end a run with them. */
const NOT_WRITERS: Record<string, string[]> = {
  // The in-memory store builds its batch writes out of its single ones.
  'libs/core/src/session/memory-conversation-store.ts': ["a run row's state", 'the archive hand-off'],
  // The engine yields the agent's done; the runner hands it to the lifecycle, which writes it.
  'libs/core/src/engine/agent-executor.ts': ['a done'],
  // Parsing an event from its wire form.
  'libs/core/src/events/execution-event.ts': ['a done'],
};

const ROOT = join(import.meta.dirname, '../../../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Each write made outside the lifecycle, as `file: what`. */
export function secondWriters(files: Array<{ path: string; text: string }>): string[] {
  return files.flatMap(({ path, text }) =>
    path === OWNER || path.startsWith('libs/persistence/') ? [] : WRITES.filter((w) => w.call.test(text) && !(NOT_WRITERS[path] ?? []).includes(w.what)).map((w) => `${path}: ${w.what}`),
  );
}

describe("a run's end has one writer", () => {
  const files = ['apps', 'libs'].flatMap((dir) => sources(join(ROOT, dir))).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }));

  it('only the lifecycle module writes a run’s row state, done, slot and archive hand-off', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(files.some((f) => f.path === OWNER)).toBe(true);
    expect(secondWriters(files)).toEqual([]);
  });

  it('names a second writer when one appears', () => {
    const runner = files.find((f) => f.path === 'apps/worker/src/runs/run-runner.ts')!;
    const injected = { ...runner, text: `${runner.text}\nawait store.runs.markFinished(id, 'failed');\nawait this.slots.release(t, id);\n` };
    expect(secondWriters([injected])).toEqual(["apps/worker/src/runs/run-runner.ts: a run row's state", "apps/worker/src/runs/run-runner.ts: a run's tenant slot"]);
  });
});
