/**
 * The harness Redis, started by global-setup.mjs for the e2e project.
 * @throws Error when the spec runs without it (outside the e2e project).
 */
export function harnessRedisUrl(): string {
  const url = process.env.DATAAGENT_REDIS_URL;
  if (!url) throw new Error('DATAAGENT_REDIS_URL is unset: run this spec in the e2e project (npm run test:e2e), whose global setup starts Redis');
  return url;
}
