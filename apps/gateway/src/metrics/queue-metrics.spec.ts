import type { Queue } from 'bullmq';
import { queueMetrics } from './queue-metrics.js';

describe('queueMetrics', () => {
  it("renames BullMQ's job-count gauge and leaves its other families and the queue name alone", async () => {
    const bullmq = [
      '# HELP bullmq_job_count Number of jobs in the queue by state',
      '# TYPE bullmq_job_count gauge',
      'bullmq_job_count{queue="bullmq_job_count", state="waiting"} 2',
      '# HELP bullmq_job_completed_total Total number of completed jobs',
      '# TYPE bullmq_job_completed_total counter',
      'bullmq_job_completed_total{queue="bullmq_job_count"} 5',
    ].join('\n');
    const queue = { exportPrometheusMetrics: async () => bullmq } as unknown as Queue;
    expect((await queueMetrics(queue)).split('\n')).toEqual([
      '# HELP bullmq_jobs Number of jobs in the queue by state',
      '# TYPE bullmq_jobs gauge',
      'bullmq_jobs{queue="bullmq_job_count", state="waiting"} 2',
      '# HELP bullmq_job_completed_total Total number of completed jobs',
      '# TYPE bullmq_job_completed_total counter',
      'bullmq_job_completed_total{queue="bullmq_job_count"} 5',
    ]);
  });
});
