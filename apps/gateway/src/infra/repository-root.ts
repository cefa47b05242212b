import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding the project's package.json (and the web UI's files beside dist/), found by
 * walking up from this module: it runs from the bundle (dist/gateway.js), from tsc's output
 * (dist/apps/gateway/src/…) and from the sources in tests.
 */
export function repositoryRoot(from: string = import.meta.url): string {
  for (let dir = dirname(fileURLToPath(from)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${fileURLToPath(from)}`);
  }
}
