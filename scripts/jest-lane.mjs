// One lane of the e2e project: a jest process in band with its own Redis and MariaDB (the
// project's global setup), its lines prefixed with the lane's label; or any command so prefixed.
// Used by scripts/test-e2e-lanes.mjs and scripts/test-flaky.mjs.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const jestArgs = ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', path.join(root, 'node_modules/jest/bin/jest.js')];

/**
 * Runs `command` with its lines prefixed with `label` (unless `quiet`).
 * @returns its exit code, its seconds and its last 400 lines.
 */
export function runPrefixed(label, command, args, { quiet = false } = {}) {
  const child = spawn(command, args, { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail = [];
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.setEncoding('utf8');
    const line = (text) => {
      if (!quiet) process.stdout.write(`[${label}] ${text}\n`);
      tail.push(text);
      if (tail.length > 400) tail.shift();
    };
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const text of lines) line(text);
    });
    stream.on('end', () => rest && line(rest));
  }
  const started = Date.now();
  return new Promise((resolve) => {
    child.on('exit', (code) => resolve({ label, code, seconds: (Date.now() - started) / 1000, output: tail }));
  });
}

/**
 * Runs jest in band on `files`, its lines prefixed with `label` (unless `quiet`).
 * @returns jest's exit code, the lane's seconds and jest's JSON results (`crashed` when it wrote none).
 */
export async function runJest(label, files, resultsDir, { quiet = false } = {}) {
  const outputFile = path.join(resultsDir, `${label}.json`);
  const run = await runPrefixed(label, process.execPath, [...jestArgs, '--selectProjects', 'e2e', '--runInBand', '--json', `--outputFile=${outputFile}`, '--runTestsByPath', ...files], { quiet });
  let results;
  try {
    results = JSON.parse(readFileSync(outputFile, 'utf8'));
  } catch {
    results = { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, testResults: [], crashed: true };
  }
  return { ...run, results };
}
