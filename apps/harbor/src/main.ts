/**
 * Harbor, DataAgent's load and quality tester:
 *
 *   harbor run --server http://127.0.0.1:8000 --questions apps/harbor/questions/sample.json \
 *     --concurrency 50 --mode socketio --out harbor-report
 *
 * Asks a question set at a concurrency over REST, Socket.IO or plain WebSocket, scores each
 * answer, prints a summary and writes report.json and report.html; with LangSmith settings in
 * the environment it uploads the run too. Exit codes: see {@link EXIT}.
 */
import type { Agent } from 'undici';
import { Command, CommanderError } from 'commander';
import { EXIT, HarborUsageError } from './cli/harbor-errors.js';
import { checkServer } from './cli/preflight.js';
import { Progress } from './cli/progress.js';
import { DEFAULTS, MODES, parseRunOptions, type Mode, type RawRunOptions } from './cli/run-options.js';
import { langSmithSettings, uploadToLangSmith } from './langsmith/langsmith-upload.js';
import { loadQuestionSet } from './questions/question-set.js';
import { buildReport } from './report/harbor-report.js';
import { writeReportFiles } from './report/report-files.js';
import { formatPercent, renderTerminalSummary } from './report/terminal-summary.js';
import type { ChatTransport, ServerTarget } from './runs/chat-transport.js';
import { plannedCount, runLoad, type LoadPlan } from './runs/load-runner.js';
import { RestTransport, restAgent } from './runs/rest-transport.js';
import { SocketIoTransport } from './runs/socketio-transport.js';
import { WsTransport } from './runs/ws-transport.js';

/** How long a finished Harbor waits for stray handles (a socket closing) before it exits anyway. */
const EXIT_GRACE_MS = 2_000;

function openTransport(mode: Mode, target: ServerTarget, agent: Agent): ChatTransport {
  switch (mode) {
    case 'rest':
      return new RestTransport(target, agent);
    case 'socketio':
      return new SocketIoTransport(target);
    case 'ws':
      return new WsTransport(target, agent);
  }
}

async function run(raw: RawRunOptions): Promise<number> {
  const options = parseRunOptions(raw, process.env);
  const set = await loadQuestionSet(options.questions);
  const target: ServerTarget = { baseUrl: options.server, assistantId: options.assistant, ...(options.apiKey ? { apiKey: options.apiKey } : {}) };
  const langsmith = langSmithSettings(process.env);
  if (!langsmith && /^(true|1)$/i.test(process.env.LANGSMITH_TRACING_V2 ?? '')) {
    console.error('harbor: LANGSMITH_TRACING_V2 is set but LANGSMITH_API_KEY is not: nothing goes to LangSmith');
  }
  const agent = restAgent();
  try {
    const server = await checkServer(target, agent);
    if (server.degraded) console.error(`harbor: warning: ${server.degraded}; expect errors`);
    const plan: LoadPlan = {
      questions: set.questions,
      concurrency: options.concurrency,
      repeat: options.repeat,
      rampUpMs: options.rampUpMs,
      timeoutMs: options.timeoutMs,
      ...(options.durationMs !== undefined ? { durationMs: options.durationMs } : {}),
    };
    const planned = plannedCount(plan);
    console.error(
      `harbor: ${planned ?? `${options.durationMs! / 1000} s of`} questions from ${set.file} over ${options.mode} at concurrency ${options.concurrency} ` +
        `against ${options.server}${server.version ? ` (DataAgent ${server.version})` : ''}${server.caller ? ` as ${server.caller}` : ''}`,
    );

    const stop = new AbortController();
    const onSigint = () => {
      if (stop.signal.aborted) process.exit(EXIT.interrupted);
      stop.abort();
      console.error('\nharbor: stopping: waiting for the questions in flight (Ctrl-C again quits at once)');
    };
    process.on('SIGINT', onSigint);
    const progress = new Progress(process.stderr, planned);
    const loadRun = await runLoad(plan, () => openTransport(options.mode, target, agent), { onResult: (r) => progress.record(r), stop: stop.signal });
    progress.finish();
    process.off('SIGINT', onSigint);

    const report = buildReport(options, set, loadRun);
    const files = await writeReportFiles(options.out, report);
    console.log(renderTerminalSummary(report));
    console.log(`  ${'report'.padEnd(14)} ${files.json} · ${files.html}`);
    let code: number = EXIT.ok;
    if (loadRun.interrupted) code = EXIT.interrupted;
    else if (report.summary.pass_rate < options.minPassRate) {
      code = EXIT.belowMinPassRate;
      console.log(`  pass rate ${formatPercent(report.summary.pass_rate)} is below --min-pass-rate ${formatPercent(options.minPassRate)}`);
    }
    if (langsmith) {
      try {
        const upload = await uploadToLangSmith(langsmith, set, report);
        console.log(
          `  ${'langsmith'.padEnd(14)} ${upload.runs} traces and ${upload.feedback} feedback in "${upload.project}"; dataset "${upload.dataset}" ` +
            `${upload.datasetCreated ? 'created' : 'reused'}, ${upload.examplesAdded} examples added`,
        );
      } catch (err) {
        console.error(`harbor: the LangSmith upload failed: ${err instanceof Error ? err.message : String(err)}`);
        if (code === EXIT.ok) code = EXIT.langsmithFailed;
      }
    }
    return code;
  } finally {
    await agent.close();
  }
}

async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command('harbor')
    .description('Load and quality tests for a DataAgent server')
    .exitOverride()
    .showHelpAfterError();
  program
    .command('run')
    .description('ask a question set at a concurrency, score the answers, write report.json and report.html')
    .option('--server <url>', 'the gateway, e.g. http://127.0.0.1:8000')
    .option('--api-key <key>', 'API key (default: $HARBOR_API_KEY; none for a server without auth)')
    .option('--questions <file>', 'question set: JSON, see apps/harbor/questions/sample.json')
    .option('--concurrency <n>', `questions in flight at once (default: ${DEFAULTS.concurrency})`)
    .option('--mode <mode>', `${MODES.join(' | ')} (default: ${DEFAULTS.mode})`)
    .option('--out <dir>', `where report.json and report.html go (default: ${DEFAULTS.out})`)
    .option('--min-pass-rate <r>', 'exit 1 when the pass rate is below r, 0..1 (default: 0)')
    .option('--ramp-up <s>', 'start the concurrent slots evenly over s seconds (default: 0)')
    .option('--duration <s>', 'keep asking, cycling through the set, for s seconds')
    .option('--repeat <n>', 'ask the whole set n times (default: 1)')
    .option('--timeout <s>', `seconds one question may take (default: ${DEFAULTS.timeout})`)
    .option('--assistant <id>', `assistant to ask (default: ${DEFAULTS.assistant})`)
    .action(async (raw: RawRunOptions) => {
      code = await run(raw);
    });
  await program.parseAsync(argv, { from: 'user' });
  return code;
}

main(process.argv.slice(2)).then(
  (code) => finish(code),
  (err: unknown) => {
    if (err instanceof CommanderError) return finish(err.exitCode === 0 ? EXIT.ok : EXIT.usage);
    if (err instanceof HarborUsageError) {
      console.error(`harbor: ${err.message}`);
      return finish(EXIT.usage);
    }
    console.error(`harbor: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    finish(EXIT.crashed);
  },
);

/** Lets stdout drain by exiting naturally, unless a stray handle keeps the process up. */
function finish(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
}
