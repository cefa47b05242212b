import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { api } from './support/chat-clients.js';
import { waitUntil } from './support/event-waits.js';
import { TEST_API_KEY, TestSystem } from './support/system.js';

const root = fileURLToPath(new URL('../', import.meta.url));

describe('logs and startup configuration', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workers: 1, env: { DATAAGENT_LOG_LEVEL: 'info' } });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('writes JSON logs with the request id on every line of a request, and never a secret', async () => {
    const res = await api(system.url, 'POST', '/chat', { apiKey: TEST_API_KEY, body: { message: 'log me' }, headers: { 'x-request-id': 'req-logging-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-logging-1');
    // The access line is written once the answer is out: wait for it, not for a while.
    await waitUntil(() => system.gateway.output.some((l) => l.includes('req-logging-1') && l.includes('"res"')), 5_000);
    const lines = system.gateway.output.filter((l) => l.includes('req-logging-1'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ request_id: 'req-logging-1' });
    // The access line names the request and its answer, never its headers (where keys and tokens travel).
    const access = lines.map((l) => JSON.parse(l)).find((l) => l.res);
    expect(access).toMatchObject({ req: { method: 'POST', url: '/api/v1/chat' }, res: { statusCode: 200 } });
    expect(access.req).not.toHaveProperty('headers');
    expect(access.res).not.toHaveProperty('headers');
    const everything = [...system.gateway.output, ...system.workers.flatMap((w) => w.output)].join('\n');
    expect(everything).not.toContain(TEST_API_KEY);
    expect(everything).not.toContain(String(system.env.OPENAI_API_KEY));
    expect(everything).not.toContain(String(system.env.DATAAGENT_MYSQL_PASSWORD));
  });

  it('refuses to start on a bad value with a message naming it', () => {
    for (const app of ['gateway.js', 'worker.js']) {
      const run = spawnSync(process.execPath, [`${root}dist/${app}`], { env: { ...process.env, ...system.env, DATAAGENT_REDIS_URL: 'http://nope', DATAAGENT_LOG_LEVEL: 'loud' }, encoding: 'utf8', timeout: 20_000 });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/DATAAGENT_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
      expect(run.stderr).toMatch(/DATAAGENT_LOG_LEVEL/);
    }
  });
});
