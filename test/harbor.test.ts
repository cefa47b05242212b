import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, assertWellFormedRun } from './support/chat-clients.js';
import { LangSmithRecorder } from './support/langsmith-recorder.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const root = fileURLToPath(new URL('../', import.meta.url)).replace(/dist\/$/, '');
const BIN = join(root, 'apps/harbor/bin/harbor.mjs');
const SAMPLE = join(root, 'apps/harbor/questions/sample.json');

interface SampleQuestion {
  id: string;
  question: string;
  expected_keywords: string[];
  expected_pattern: string | null;
  category: string;
  difficulty: string;
}
const sample = JSON.parse(readFileSync(SAMPLE, 'utf8')) as { name: string; questions: SampleQuestion[] };
/** The sample's tool questions make two model calls (the call, then the answer); the others one. */
const expectedLlmCalls = sample.questions.reduce((sum, q) => sum + (q.question.includes('[[tool:') ? 2 : 1), 0);

/** One user per mode, so each mode's sessions can be counted on the server on their own. */
const KEYS = { rest: 'harbor-key-rest', socketio: 'harbor-key-socketio', ws: 'harbor-key-ws', other: 'harbor-key-other' } as const;

interface HarborRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the `harbor` bin as a user would, in its own process; no LangSmith setting leaks in from outside. */
function harbor(args: string[], env: NodeJS.ProcessEnv = {}): Promise<HarborRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('LANGSMITH_') && name !== 'HARBOR_API_KEY'));
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...base, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

function readReport(dir: string): { report: any; html: string } {
  return { report: JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')), html: readFileSync(join(dir, 'report.html'), 'utf8') };
}

/** Nearest rank, computed here independently of Harbor's own statistics. */
function nearestRank(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

describe('Harbor, the load and quality tester, against a running system', () => {
  let system: TestSystem;
  let work: string;

  beforeAll(async () => {
    system = await TestSystem.start({
      env: { DATAAGENT_API_KEYS: [`${TEST_API_KEY}:acme:alice`, ...Object.entries(KEYS).map(([mode, key]) => `${key}:acme:harbor-${mode}`)].join(',') },
    });
    work = mkdtempSync(join(tmpdir(), 'harbor-test-'));
  });
  afterAll(async () => {
    await system?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(['rest', 'socketio', 'ws'] as const)('asks the sample set at concurrency 50 over %s, and its report agrees with the server', async (mode) => {
    const out = join(work, mode);
    const llmCallsBefore = system.llm.requests.length;
    const run = await harbor(['run', '--server', system.url, '--api-key', KEYS[mode], '--questions', SAMPLE, '--concurrency', '50', '--mode', mode, '--out', out, '--min-pass-rate', '1']);
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });

    const { report, html } = readReport(out);
    const n = sample.questions.length;
    expect(report.config).toMatchObject({ mode, concurrency: 50, server: system.url });
    expect(report.summary).toMatchObject({ total: n, passed: n, failed: 0, error: 0, timeout: 0, pass_rate: 1 });
    expect(report.failures).toEqual([]);
    expect(report.results.map((r: any) => r.question_id).sort()).toEqual(sample.questions.map((q) => q.id).sort());
    for (const result of report.results) {
      const question = sample.questions.find((q) => q.id === result.question_id)!;
      expect(result).toMatchObject({ status: 'passed', category: question.category, keywords_matched: question.expected_keywords, keywords_missing: [] });
      expect(result.pattern_matched).toBe(true);
      expect(result.total_ms).toBeGreaterThan(0);
      expect(result.ttft_ms).toBeGreaterThanOrEqual(0);
      expect(result.ttft_ms).toBeLessThanOrEqual(result.total_ms);
      assertWellFormedRun(result.events);
      expect(result.events.every((e: any) => e.run_id === result.run_id && e.session_id === result.session_id)).toBe(true);
    }

    // The summary's figures are the results' own.
    const totals = report.results.map((r: any) => r.total_ms);
    for (const p of [50, 95, 99] as const) expect(report.summary.total_ms[`p${p}`]).toBe(nearestRank(totals, p));
    expect(report.summary.total_ms.mean).toBeCloseTo(totals.reduce((a: number, b: number) => a + b, 0) / n, 6);
    expect(report.summary.ttft_ms.p50).toBe(nearestRank(report.results.map((r: any) => r.ttft_ms), 50));
    for (const [category, group] of Object.entries<any>(report.summary.by_category)) {
      expect(group.total).toBe(sample.questions.filter((q) => q.category === category).length);
    }

    // The server saw exactly these conversations: one session per question, holding its run.
    const sessions = await api(system.url, 'GET', '/sessions?limit=1000', { apiKey: KEYS[mode] });
    expect(sessions.body.sessions.map((s: any) => s.session_id).sort()).toEqual(report.results.map((r: any) => r.session_id).sort());
    const byId = new Map<string, any>(report.results.map((r: any) => [r.session_id, r]));
    for (const sessionId of byId.keys()) {
      const { body } = await api(system.url, 'GET', `/sessions/${sessionId}/messages`, { apiKey: KEYS[mode] });
      const result = byId.get(sessionId);
      expect(body.messages[0]).toMatchObject({ role: 'user', content: result.question, run_id: result.run_id });
      expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', run_id: result.run_id });
    }
    expect(system.llm.requests.length - llmCallsBefore).toBe(expectedLlmCalls);

    // The terminal summary and the page say the same.
    expect(run.stdout).toContain(`${n} asked in`);
    expect(run.stdout).toContain(`${n} passed (100.0%), 0 failed, 0 errors, 0 timeouts`);
    expect(run.stdout).toMatch(/response time\s+mean \S+ m?s\s+p50 \S+ m?s\s+p95 \S+ m?s\s+p99/);
    expect(run.stderr).toMatch(new RegExp(`harbor: ${n}/${n} done · 100\\.0% passed · p50 `));
    expect(html).toContain(`data-chart="latency-histogram" data-count="${n}"`);
    const bars = [...html.matchAll(/<rect class="bar" data-from="[^"]*" data-to="[^"]*" data-count="(\d+)"/g)].map((m) => Number(m[1]));
    expect(bars.reduce((a, b) => a + b, 0)).toBe(n);
    expect(html).toContain(`data-chart="time-series" data-count="${n}"`);
    for (const [category, group] of Object.entries<any>(report.summary.by_category)) {
      expect(html).toContain(`data-label="${category}" data-passed="${group.passed}" data-total="${group.total}"`);
    }
    expect(html).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);
    expect(readFileSync(join(out, 'report.json'), 'utf8')).not.toContain(KEYS[mode]);
  });

  it('shows a question with a wrong expectation as failed, and --min-pass-rate 1 then exits 1', async () => {
    const [right, wrongKeyword, wrongPattern] = sample.questions.filter((q) => q.category === 'planning');
    const file = join(work, 'wrong.json');
    writeFileSync(file, JSON.stringify([right, { ...wrongKeyword, expected_keywords: ['write_todos', 'Todo list updated: 99 items'] }, { ...wrongPattern, expected_pattern: 'never said' }]));
    const args = ['run', '--server', system.url, '--api-key', KEYS.other, '--questions', file, '--concurrency', '3', '--mode', 'socketio'];

    const strict = await harbor([...args, '--out', join(work, 'wrong-strict'), '--min-pass-rate', '1']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('1 passed (33.3%), 2 failed');
    expect(strict.stdout).toContain(`${wrongKeyword.id} #1 [planning] failed: missing "Todo list updated: 99 items"`);
    expect(strict.stdout).toContain(`${wrongPattern.id} #1 [planning] failed: no match for never said`);
    expect(strict.stdout).toContain('pass rate 33.3% is below --min-pass-rate 100.0%');
    const { report, html } = readReport(join(work, 'wrong-strict'));
    expect(report.summary).toMatchObject({ total: 3, passed: 1, failed: 2, pass_rate: 1 / 3 });
    expect(report.failures.map((f: any) => [f.question_id, f.status]).sort()).toEqual([[wrongKeyword.id, 'failed'], [wrongPattern.id, 'failed']].sort());
    const failed = report.results.find((r: any) => r.question_id === wrongKeyword.id);
    expect(failed).toMatchObject({ keywords_matched: ['write_todos'], keywords_missing: ['Todo list updated: 99 items'], pattern_matched: true });
    expect(report.results.find((r: any) => r.question_id === wrongPattern.id).pattern_matched).toBe(false);
    expect(html).toContain('<h2>Failures (2)</h2>');
    expect(html).toContain(`<td>${wrongKeyword.id}</td><td class="num">1</td><td>planning</td><td class="s-failed">failed</td>`);

    const lenient = await harbor([...args, '--out', join(work, 'wrong-lenient'), '--min-pass-rate', '0.3']);
    expect(lenient.code).toBe(0);
  });

  it('says what is wrong, before asking anything, with bad options, a bad question file, an unreachable server or a refused key', async () => {
    const questions = ['--questions', SAMPLE];
    const options = await harbor(['run', '--server', 'not a url', '--concurrency', '-1', '--mode', 'grpc', ...questions]);
    expect(options.code).toBe(2);
    expect(options.stderr).toContain('--server must be a URL');
    expect(options.stderr).toContain('--concurrency must be a whole number from 1 to 10000 (got "-1")');
    expect(options.stderr).toContain('--mode must be one of rest, socketio, ws (got "grpc")');

    const badFile = join(work, 'bad.json');
    writeFileSync(badFile, JSON.stringify({ questions: [{ question: 'Q', expected_keywords: 'Paris', category: 'geo' }] }));
    const file = await harbor(['run', '--server', system.url, '--api-key', KEYS.other, '--questions', badFile]);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain(`the question set ${badFile} is not valid`);
    expect(file.stderr).toContain('question 1: expected_keywords must be array');
    expect(file.stderr).toContain("question 1: must have required property 'difficulty'");

    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const unreachable = await harbor(['run', '--server', `http://127.0.0.1:${closedPort}`, ...questions]);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain(`cannot reach the DataAgent server at http://127.0.0.1:${closedPort}: ECONNREFUSED`);

    const wrongKey = await harbor(['run', '--server', system.url, '--api-key', 'not-a-key-of-this-server', ...questions]);
    expect(wrongKey.code).toBe(2);
    expect(wrongKey.stderr).toContain('refused the API key (invalid_api_key)');
    const noKey = await harbor(['run', '--server', system.url, ...questions]);
    expect(noKey.stderr).toContain('needs an API key: pass --api-key or set HARBOR_API_KEY');
    const one = join(work, 'one-question.json');
    writeFileSync(one, JSON.stringify([sample.questions[0]]));
    const fromEnv = await harbor(['run', '--server', system.url, '--questions', one, '--out', join(work, 'env-key')], { HARBOR_API_KEY: KEYS.other });
    expect(fromEnv.code).toBe(0);
  });

  describe('with LangSmith settings', () => {
    let recorder: LangSmithRecorder;

    beforeAll(async () => {
      recorder = await LangSmithRecorder.start();
    });
    afterAll(async () => {
      await recorder?.stop();
    });

    it('uploads the set as a dataset once, a trace per question with its metadata, and the results as feedback', async () => {
      const [first, second, third] = sample.questions;
      const file = join(work, 'langsmith.json');
      const env = { LANGSMITH_API_KEY: 'lsv2-test-not-a-real-key', LANGSMITH_TRACING_V2: 'true', LANGSMITH_ENDPOINT: recorder.url, LANGSMITH_PROJECT: 'harbor-tests' };
      const runWith = async (questions: SampleQuestion[], out: string) => {
        writeFileSync(file, JSON.stringify({ name: 'harbor-langsmith-set', questions }));
        const run = await harbor(['run', '--server', system.url, '--api-key', KEYS.other, '--questions', file, '--concurrency', '3', '--mode', 'ws', '--out', join(work, out)], env);
        expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });
        return { run, report: readReport(join(work, out)).report };
      };

      const { run, report } = await runWith([first, second, { ...third, expected_keywords: ['not in the answer'] }], 'langsmith-1');
      expect(run.stdout).toContain('3 traces and 6 feedback in "harbor-tests"; dataset "harbor-langsmith-set" created, 3 examples added');
      expect(recorder.calls.length).toBeGreaterThan(0);
      expect(recorder.calls.every((c) => c.headers['x-api-key'] === 'lsv2-test-not-a-real-key')).toBe(true);

      // The dataset and its examples.
      expect(recorder.find('POST', /^\/datasets$/).map((c) => c.json.name)).toEqual(['harbor-langsmith-set']);
      const [dataset] = recorder.datasets.values();
      const examples = [...recorder.examples.values()].filter((e) => e.dataset_id === dataset.id);
      expect(examples.map((e) => e.metadata.question_id).sort()).toEqual([first.id, second.id, third.id].sort());
      const exampleOf = new Map(examples.map((e) => [e.metadata.question_id as string, e]));
      expect(exampleOf.get(first.id)).toMatchObject({ inputs: { question: first.question }, outputs: { expected_keywords: first.expected_keywords }, metadata: { category: first.category } });

      // A trace per question, with the metadata, linked to its example, timed as in the report.
      const runs = recorder.find('POST', /^\/runs$/).map((c) => c.json);
      expect(runs).toHaveLength(3);
      for (const traced of runs) {
        const result = report.results.find((r: any) => r.question_id === traced.extra.metadata.question_id);
        expect(traced).toMatchObject({ name: 'harbor.question', run_type: 'chain', session_name: 'harbor-tests', trace_id: traced.id, reference_example_id: exampleOf.get(result.question_id)!.id });
        expect(traced.extra.metadata).toMatchObject({ question_id: result.question_id, category: result.category, response_time: result.total_ms / 1000, status: result.status, dataagent_run_id: result.run_id });
        expect(traced.inputs).toEqual({ question: result.question });
        expect(traced.outputs).toMatchObject({ answer: result.answer, status: result.status });
      }

      // The results as feedback on those traces.
      const feedback = recorder.find('POST', /^\/feedback$/).map((c) => c.json);
      const project = recorder.projects.get('harbor-tests')!;
      const passedByRun = new Map(runs.map((r) => [r.id, r.extra.metadata.status === 'passed' ? 1 : 0]));
      const verdicts = feedback.filter((f) => f.key === 'harbor_passed');
      expect(verdicts).toHaveLength(3);
      for (const verdict of verdicts) expect(verdict).toMatchObject({ score: passedByRun.get(verdict.run_id), session_id: project.id, trace_id: verdict.run_id });
      expect(verdicts.map((v) => v.score).sort()).toEqual([0, 1, 1]);
      expect(feedback.filter((f) => f.key === 'keyword_match').map((f) => f.score).sort()).toEqual([0, 1, 1]);

      // A second run reuses the dataset and adds only the question it lacks.
      const [, , , fourth] = sample.questions;
      const again = await runWith([first, second, third, fourth], 'langsmith-2');
      expect(again.run.stdout).toContain('dataset "harbor-langsmith-set" reused, 1 examples added');
      expect(recorder.find('POST', /^\/datasets$/)).toHaveLength(1);
      expect([...recorder.examples.values()].map((e) => e.metadata.question_id).sort()).toEqual([first.id, second.id, third.id, fourth.id].sort());
      expect(recorder.find('POST', /^\/runs$/)).toHaveLength(7);
    });

    it('sends nothing without LANGSMITH_TRACING_V2, and says so when the key is missing', async () => {
      const before = recorder.calls.length;
      const file = join(work, 'one.json');
      writeFileSync(file, JSON.stringify([sample.questions[0]]));
      const args = ['run', '--server', system.url, '--api-key', KEYS.other, '--questions', file, '--out', join(work, 'no-langsmith')];
      const off = await harbor(args, { LANGSMITH_API_KEY: 'lsv2-test-not-a-real-key', LANGSMITH_ENDPOINT: recorder.url });
      expect(off.code).toBe(0);
      const noKey = await harbor(args, { LANGSMITH_TRACING_V2: 'true', LANGSMITH_ENDPOINT: recorder.url });
      expect(noKey.code).toBe(0);
      expect(noKey.stderr).toContain('LANGSMITH_TRACING_V2 is set but LANGSMITH_API_KEY is not');
      expect(recorder.calls.length).toBe(before);
    });
  });
});
