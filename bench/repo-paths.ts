import { fileURLToPath } from 'node:url';

/** The repository root, whether this runs from `dist/bench/` (always, once built) or from `bench/`. */
export const repoRoot = fileURLToPath(new URL('../', import.meta.url)).replace(/dist\/$/, '');

/** Where a run's figures are written. */
export const resultsDir = `${repoRoot}bench/results`;
