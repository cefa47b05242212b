import type { Queue } from 'bullmq';

/** BullMQ's name for the queue's job counts by state, which breaks Prometheus's naming rules. */
const BULLMQ_COUNT = /^((?:# (?:HELP|TYPE) )?)bullmq_job_count(?=[\s{])/gm;

/**
 * BullMQ's own Prometheus export of the run queue (job counts by state, completed and failed
 * totals), with its gauge `bullmq_job_count` renamed `bullmq_jobs`: a `_count` suffix belongs
 * to histograms and summaries, and `promtool check metrics` rejects the scrape otherwise.
 *
 * @param queue The run queue.
 * @returns Prometheus text, the same families BullMQ writes but for that one name.
 */
export async function queueMetrics(queue: Queue): Promise<string> {
  return (await queue.exportPrometheusMetrics()).replace(BULLMQ_COUNT, '$1bullmq_jobs');
}
