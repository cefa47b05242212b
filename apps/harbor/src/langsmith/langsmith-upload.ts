import { randomUUID } from 'node:crypto';
import { Client, uuid7FromTime } from 'langsmith';
import { convertToDottedOrderFormat } from 'langsmith/run_trees';
import type { QuestionSet } from '../questions/question-set.js';
import type { HarborReport } from '../report/harbor-report.js';
import type { QuestionResult } from '../runs/question-result.js';

/** Runs and feedback sent at once. */
const UPLOAD_CONCURRENCY = 8;

export interface LangSmithSettings {
  apiKey: string;
  /** LANGSMITH_ENDPOINT; the client's default (https://api.smith.langchain.com) without it. */
  endpoint?: string;
  /** LANGSMITH_PROJECT; without it each run gets a project of its own, an experiment on the dataset. */
  project?: string;
}

/** On when LANGSMITH_API_KEY is set and LANGSMITH_TRACING_V2 is `true`. */
export function langSmithSettings(env: NodeJS.ProcessEnv): LangSmithSettings | undefined {
  if (!env.LANGSMITH_API_KEY || !/^(true|1)$/i.test(env.LANGSMITH_TRACING_V2 ?? '')) return undefined;
  return {
    apiKey: env.LANGSMITH_API_KEY,
    ...(env.LANGSMITH_ENDPOINT ? { endpoint: env.LANGSMITH_ENDPOINT } : {}),
    ...(env.LANGSMITH_PROJECT ? { project: env.LANGSMITH_PROJECT } : {}),
  };
}

export interface UploadSummary {
  project: string;
  dataset: string;
  datasetCreated: boolean;
  examplesAdded: number;
  runs: number;
  feedback: number;
}

/**
 * Sends a finished run to LangSmith: the question set as a dataset (created once, then reused;
 * questions it lacks, by question_id, are added), a trace per question with the metadata
 * question_id, category and response_time, linked to its example, and each result as feedback
 * (`harbor_passed`, and `keyword_match` for questions with keywords).
 *
 * @throws the client's error when LangSmith refuses or cannot be reached.
 */
export async function uploadToLangSmith(settings: LangSmithSettings, set: QuestionSet, report: HarborReport): Promise<UploadSummary> {
  const client = new Client({
    apiKey: settings.apiKey,
    ...(settings.endpoint ? { apiUrl: settings.endpoint } : {}),
    // Each call goes out as it is made, so a failure reaches us instead of a background queue.
    autoBatchTracing: false,
    // The client would otherwise copy environment details into every run.
    omitTracedRuntimeInfo: true,
    callerOptions: { maxRetries: 2 },
    timeout_ms: 30_000,
  });

  const { datasetId, created } = await ensureDataset(client, set);
  const examples = new Map<string, string>();
  for await (const example of client.listExamples({ datasetId })) {
    const questionId = example.metadata?.question_id;
    if (typeof questionId === 'string') examples.set(questionId, example.id);
  }
  const missing = set.questions.filter((q) => !examples.has(q.id));
  if (missing.length > 0) {
    const uploads = missing.map((q) => {
      const id = randomUUID();
      examples.set(q.id, id);
      return {
        id,
        dataset_id: datasetId,
        inputs: { question: q.question },
        reference_outputs: { expected_keywords: q.expected_keywords, expected_pattern: q.expected_pattern },
        metadata: { question_id: q.id, category: q.category, difficulty: q.difficulty },
      };
    });
    await client.createExamples(uploads);
  }

  const projectName = settings.project ?? `${set.name} · ${report.config.mode} · ${report.run.started_at}`;
  const project = await client.createProject({
    projectName,
    upsert: true,
    description: `Harbor: ${report.summary.total} questions over ${report.config.mode} at concurrency ${report.config.concurrency} against ${report.config.server}`,
    metadata: { harbor_mode: report.config.mode, concurrency: report.config.concurrency, pass_rate: report.summary.pass_rate },
    ...(settings.project ? {} : { referenceDatasetId: datasetId }),
  });

  let feedback = 0;
  await eachLimited(report.results, UPLOAD_CONCURRENCY, async (result) => {
    const runId = await traceResult(client, projectName, result, report.config.mode, examples.get(result.question_id));
    const base = { runId, traceId: runId, sessionId: project.id };
    await client.createFeedback({ ...base, key: 'harbor_passed', score: result.status === 'passed' ? 1 : 0, value: result.status, ...(result.reason ? { comment: result.reason } : {}) });
    feedback++;
    const keywords = result.keywords_matched.length + result.keywords_missing.length;
    if (keywords > 0) {
      await client.createFeedback({ ...base, key: 'keyword_match', score: result.keywords_matched.length / keywords });
      feedback++;
    }
  });
  return { project: projectName, dataset: set.name, datasetCreated: created, examplesAdded: missing.length, runs: report.results.length, feedback };
}

async function ensureDataset(client: Client, set: QuestionSet): Promise<{ datasetId: string; created: boolean }> {
  try {
    return { datasetId: (await client.readDataset({ datasetName: set.name })).id, created: false };
  } catch (err) {
    if (!(err instanceof Error && /not found/i.test(err.message))) throw err;
  }
  const dataset = await client.createDataset(set.name, {
    description: set.description ?? `Harbor question set ${set.file}`,
    metadata: { source: 'harbor' },
  });
  return { datasetId: dataset.id, created: true };
}

/** One root run per question, timed as Harbor measured it; returns its id. */
async function traceResult(client: Client, projectName: string, result: QuestionResult, mode: string, exampleId: string | undefined): Promise<string> {
  const start = Date.parse(result.started_at);
  const id = uuid7FromTime(start);
  await client.createRun({
    id,
    trace_id: id,
    dotted_order: convertToDottedOrderFormat(start, id).dottedOrder,
    name: 'harbor.question',
    run_type: 'chain',
    project_name: projectName,
    start_time: start,
    end_time: start + result.total_ms,
    inputs: { question: result.question },
    outputs: { answer: result.answer, status: result.status },
    ...(result.status === 'error' || result.status === 'timeout' ? { error: result.reason ?? result.status } : {}),
    ...(exampleId ? { reference_example_id: exampleId } : {}),
    extra: {
      metadata: {
        question_id: result.question_id,
        category: result.category,
        difficulty: result.difficulty,
        iteration: result.iteration,
        // Seconds, as LangSmith shows latencies.
        response_time: result.total_ms / 1000,
        time_to_first_token: result.ttft_ms === null ? null : result.ttft_ms / 1000,
        status: result.status,
        mode,
        dataagent_session_id: result.session_id,
        dataagent_run_id: result.run_id,
      },
    },
  });
  return id;
}

/** Runs `task` on every item, at most `limit` at a time; the first failure rejects. */
async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
