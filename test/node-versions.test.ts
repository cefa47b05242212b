import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileTypeValidator } from '@nestjs/common';
import semver from 'semver';

/**
 * The Node.js versions DataAgent claims (package.json `engines.node`) are ones it can keep:
 * no installed package refuses any of them, and the Dockerfile and CI's second Node.js (the
 * unit project runs on both) are among them. No network: the check reads node_modules.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CHECK = join(ROOT, 'scripts/check-engines.mjs');

function checkEngines(root: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [CHECK, root], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const claimed = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

describe('the Node.js versions we claim', () => {
  it('are the maintained lines from 20.19, 22.13 and 24.11 on, each closed at its next major', () => {
    // typeorm wants 22.13+ and 24.11+ on those lines; nothing untested (21, 23, 25+) is claimed.
    expect(claimed.split('||').map((line) => line.trim())).toEqual(['^20.19.0', '^22.13.0', '^24.11.0']);
  });

  it('are refused by no installed package, production or dev', () => {
    const { status, output } = checkEngines(ROOT);
    expect(output).toMatch(/installed packages checked against engines\.node "[^"]+": 0 refuse part of it/);
    expect(status).toBe(0);
  });

  it('have their newest line in the Dockerfile and under the unit project in CI, beside the machine\'s Node.js', () => {
    const newest = Math.max(...claimed.split('||').map((line) => semver.minVersion(line)!.major));
    const images = [...readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM node:(\d+)[-\w.]*/gm)].map((m) => Number(m[1]));
    expect(images.length).toBeGreaterThan(0);
    // What ships is what CI tested.
    expect(new Set(images)).toEqual(new Set([newest]));
    const pinned = spawnSync(process.execPath, [join(ROOT, 'scripts/with-node.mjs'), '--pinned'], { encoding: 'utf8' });
    expect(semver.satisfies((JSON.parse(pinned.stdout) as Record<string, string>)[newest], claimed)).toBe(true);
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts[`test:unit:node${newest}`]).toMatch(new RegExp(`^node scripts/with-node\\.mjs ${newest} .*node_modules/jest/bin/jest\\.js --selectProjects unit\\b`));
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(new RegExp(`^npm test -- --beside test:unit:node${newest}$`, 'm'));
  });

  it('keep @nestjs/common working with the file-type it is pinned to (its FileTypeValidator reads a file by content)', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const validator = new FileTypeValidator({ fileType: 'image/png' });
    expect(await validator.isValid({ mimetype: 'image/png', size: png.length, buffer: png })).toBe(true);
    const pdfBytes = Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
    const pdf = { mimetype: 'image/png', size: pdfBytes.length, buffer: pdfBytes };
    expect(await validator.isValid(pdf)).toBe(false);
    expect(validator.buildErrorMessage(pdf)).toContain('current file type is application/pdf');
  });
});

describe('the engines check', () => {
  let dir: string;

  function install(at: string, manifest: Record<string, unknown>): void {
    mkdirSync(join(dir, at), { recursive: true });
    writeFileSync(join(dir, at, 'package.json'), JSON.stringify(manifest));
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dataagent-engines-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', engines: { node: '^20.19.0 || ^24.11.0' } }));
    install('node_modules/fine', { name: 'fine', version: '1.0.0', engines: { node: '>=18' } });
    install('node_modules/silent', { name: 'silent', version: '1.0.0' });
    install('node_modules/@scope/newer', { name: '@scope/newer', version: '2.0.0', engines: { node: '>=22.12.0' } });
    install('node_modules/fine/node_modules/nested', { name: 'nested', version: '3.0.0', engines: { node: '^20.19.0 || ^22.13.0 || ^24.12.0' } });
    install('node_modules/garbled', { name: 'garbled', version: '0.1.0', engines: { node: 'node >= 0.4' } });
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('names each package, nested or scoped, that leaves out part of a claimed line, and fails', () => {
    const { status, output } = checkEngines(dir);
    expect(output.trim().split('\n').sort()).toEqual([
      '5 installed packages checked against engines.node "^20.19.0 || ^24.11.0": 3 refuse part of it',
      '@scope/newer@2.0.0 (node_modules/@scope/newer) wants node >=22.12.0: refuses ^20.19.0',
      'garbled@0.1.0 (node_modules/garbled) wants node node >= 0.4: refuses ^20.19.0, ^24.11.0',
      'nested@3.0.0 (node_modules/fine/node_modules/nested) wants node ^20.19.0 || ^22.13.0 || ^24.12.0: refuses ^24.11.0',
    ]);
    expect(status).toBe(1);
  });
});
