#!/usr/bin/env node
// The `harbor` command: runs Harbor as compiled into dist/ (`npm run build`;
// `npm run harbor -- run …` builds first).
import { existsSync } from 'node:fs';

const main = new URL('../../../dist/apps/harbor/src/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('harbor: not built yet: run `npm run build` first, or use `npm run harbor -- run …`, which builds');
  process.exit(2);
}
await import(main.href);
