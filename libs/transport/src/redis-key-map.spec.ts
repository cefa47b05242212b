import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { redisKeys } from './redis-keys.js';

const ROOT = join(import.meta.dirname, '../../..');
const KEY_MAP = 'libs/transport/src/redis-keys.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Redis key literals (our `da:` namespace) written anywhere but the key map, as `file: literal`. */
export function keysOutsideTheMap(files: Array<{ path: string; text: string }>): string[] {
  return files.flatMap(({ path, text }) => (path === KEY_MAP ? [] : [...text.matchAll(/['"`](da:[^'"`]*)['"`]/g)].map((m) => `${path}: ${m[1]}`)));
}

describe('the Redis key map', () => {
  it('is where every Redis key of ours is named', () => {
    const files = ['apps', 'libs'].flatMap((dir) => sources(join(ROOT, dir))).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }));
    expect(files.some((f) => f.path === KEY_MAP)).toBe(true);
    expect(keysOutsideTheMap(files)).toEqual([]);
  });

  it('names a key written elsewhere', () => {
    expect(keysOutsideTheMap([{ path: 'apps/worker/src/x.ts', text: "await redis.set('da:reaper:lock', token)" }])).toEqual(['apps/worker/src/x.ts: da:reaper:lock']);
  });

  it('gives every key of a run, and its event channel, one hash tag, so a run’s scripts (and their SPUBLISH) touch one slot', () => {
    const tags = [redisKeys.runSeq, redisKeys.runLog, redisKeys.runDone, redisKeys.runCancel, redisKeys.runOwner, redisKeys.runSteps, redisKeys.runCalls, redisKeys.runParked, redisKeys.runAppends, redisKeys.runChannel].map((key) => /\{([^}]*)\}/.exec(key('r1'))?.[1]);
    expect(new Set(tags)).toEqual(new Set(['r1']));
  });
});
