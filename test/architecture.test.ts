import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The architecture check (`npm run lint:architecture`, in `pretest`) run on a copy of the
 * sources, as on a fresh clone: no dist/. It must fail, naming the rule, once a cycle or a layer
 * break is put in. That it passes on the code as it is, `pretest` has just shown.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const COPIED = ['apps', 'libs', 'test', 'bench', 'scripts', 'package.json', 'tsconfig.json', '.dependency-cruiser.cjs'];

let copy: string;

function check(): { status: number | null; output: string } {
  const run = spawnSync('npm', ['run', '--silent', 'lint:architecture'], { cwd: copy, encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

function put(file: string, text: string): void {
  mkdirSync(dirname(join(copy, file)), { recursive: true });
  writeFileSync(join(copy, file), text);
}

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'dataagent-architecture-'));
  for (const entry of COPIED) {
    cpSync(join(ROOT, entry), join(copy, entry), { recursive: true, filter: (source) => !/[\\/](node_modules|dist)$/.test(source) });
  }
  // Packages resolve as in the repository; the sources are the copy's own.
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
});

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe('the architecture check', () => {
  it('fails on a cycle, a layer break or an import of ours that resolves to nothing, naming the rule', () => {
    // (a) A cycle across two libraries.
    put('libs/llm/src/arch-cycle-a.ts', "import { b } from '#mcp/arch-cycle-b.js';\nexport const a = (): number => b() + 1;\n");
    put('libs/mcp/src/arch-cycle-b.ts', "import { a } from '#llm/arch-cycle-a.js';\nexport const b = (): number => a() - 1;\n");
    // (b) libs/core importing another library.
    put('libs/core/src/util/arch-layer-break.ts', "import { redisKeys } from '#transport/redis-keys.js';\nexport const keys = redisKeys;\n");
    // (c) config, the bottom folder of libs/core, importing the engine.
    put('libs/core/src/config/arch-folder-break.ts', "import type { AgentConfig } from '../engine/agent-config.js';\nexport type Config = AgentConfig;\n");
    // (d) an alias of ours that names no source file (a tool blind to the sources would skip it).
    put('apps/worker/src/arch-missing.ts', "import { nothing } from '#core/no-such-folder/nothing.js';\nexport const missing = nothing;\n");

    const { status, output } = check();
    expect(status).not.toBe(0);
    expect(output).toMatch(/error no-circular: libs\/(llm\/src\/arch-cycle-a|mcp\/src\/arch-cycle-b)\.ts/);
    expect(output).toMatch(/error libs-import-only-core: libs\/llm\/src\/arch-cycle-a\.ts → libs\/mcp\/src\/arch-cycle-b\.ts/);
    expect(output).toMatch(/error core-imports-no-library: libs\/core\/src\/util\/arch-layer-break\.ts → libs\/transport\/src\/redis-keys\.ts/);
    expect(output).toMatch(/error core-folder-layers: libs\/core\/src\/config\/arch-folder-break\.ts → libs\/core\/src\/engine\/agent-config\.ts/);
    expect(output).toMatch(/error not-resolvable: apps\/worker\/src\/arch-missing\.ts → #core\/no-such-folder\/nothing\.js/);
  }, 120_000);
});

/**
 * A comment (or a test's name) says the reason itself, not the number of a requirement or of a
 * seed file a reader does not have: "Req 35.3", "Requirement 28.1", "seed 002", "seed-001", "the
 * seed's form". A cluster's seed nodes and a fuzzer's seeds are not citations.
 */
const CITATION = /\bReq(?:uirement)?s?\.?\s+\d|\bseeds?[ -]\d{3}\b|\bthe seed(?:'s)?\b(?!\s+nodes?\b)/i;

/**
 * Each line of the TypeScript under apps/, libs/, test/ and bench/ that cites a requirement or
 * seed number, as `path:line: text`; this file is left out, since its examples are citations.
 */
function citations(): string[] {
  const self = 'test/architecture.test.ts';
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      } else if (entry.name.endsWith('.ts') && path !== self) {
        readFileSync(join(ROOT, path), 'utf8').split('\n').forEach((line, i) => {
          if (CITATION.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
        });
      }
    }
  };
  for (const top of ['apps', 'libs', 'test', 'bench']) walk(top);
  return found;
}

describe('comments', () => {
  it('cite no requirement or seed number: they say the reason', () => {
    const found = citations();
    if (found.length > 0) throw new Error(`${found.length} line(s) cite a requirement or seed number; say the reason instead:\n  ${found.join('\n  ')}`);
  });

  it('are caught citing one, and a seed node or a fuzzer\'s seed is not a citation', () => {
    for (const cited of ['(seed 002, Req 7.3)', '/** Requirement 28.1: on when */', 'the seed-001 reply', "as in the seed's own example", 'seeds 000 and 001', '(Req 35)']) {
      expect(CITATION.test(cited)).toBe(true);
    }
    for (const plain of ["a cluster's seed nodes", 'the seed nodes of a Redis Cluster', 'with fixed seeds (FUZZ_SEED)', 'seed: 7', 'the seeded run', 'request 5']) {
      expect(CITATION.test(plain)).toBe(false);
    }
  });
});
