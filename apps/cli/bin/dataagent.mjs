#!/usr/bin/env node
// The `dataagent` command: runs the CLI as compiled into dist/ (`npm run build`;
// `npm run cli -- …` builds first).
import { existsSync } from 'node:fs';

const main = new URL('../../../dist/apps/cli/src/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('dataagent: not built yet: run `npm run build` first, or use `npm run cli -- …`, which builds');
  process.exit(2);
}
await import(main.href);
