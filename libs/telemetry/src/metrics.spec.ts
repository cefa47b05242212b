import { LabelCap, Metrics, OTHER_LABEL, scrapeAllowed, secondsSince } from './metrics.js';

describe('LabelCap', () => {
  it('keeps the first values and folds later new ones into other', () => {
    const cap = new LabelCap(2);
    expect([cap.of('a'), cap.of('b'), cap.of('c'), cap.of('a'), cap.of('b'), cap.of('d')]).toEqual(['a', 'b', OTHER_LABEL, 'a', 'b', OTHER_LABEL]);
  });
});

describe('scrapeAllowed', () => {
  const token = 'metrics-token-0123456789';

  it('lets anyone scrape when no token is configured', () => {
    expect(scrapeAllowed(undefined, undefined)).toBe(true);
    expect(scrapeAllowed('Bearer whatever', '')).toBe(true);
  });

  it('needs the exact bearer token when one is configured', () => {
    expect(scrapeAllowed(`Bearer ${token}`, token)).toBe(true);
    expect(scrapeAllowed(`bearer  ${token}`, token)).toBe(true);
    expect(scrapeAllowed(undefined, token)).toBe(false);
    expect(scrapeAllowed(token, token)).toBe(false);
    expect(scrapeAllowed(`Bearer ${token}x`, token)).toBe(false);
    expect(scrapeAllowed(`Bearer ${token.slice(1)}`, token)).toBe(false);
    expect(scrapeAllowed(`Basic ${token}`, token)).toBe(false);
  });
});

describe('secondsSince', () => {
  it('converts milliseconds and never goes below zero (clocks of two hosts)', () => {
    expect(secondsSince(1_000, 3_500)).toBe(2.5);
    expect(secondsSince(5_000, 4_000)).toBe(0);
  });
});

describe('Metrics', () => {
  it('has every socket transport and run outcome at zero before anything happened', async () => {
    const text = await new Metrics(false).scrape();
    for (const transport of ['socketio', 'ws', 'sse']) expect(text).toContain(`dataagent_open_sockets{transport="${transport}"} 0`);
    for (const outcome of ['completed', 'failed', 'cancelled']) expect(text).toContain(`dataagent_runs_finished_total{outcome="${outcome}"} 0`);
  });

  it('samples pools and appends other exporters at each scrape, leaving out a part that fails', async () => {
    const metrics = new Metrics(false);
    let open = 3;
    metrics.samplePool('mysql', () => ({ open, idle: 1 }));
    metrics.samplePool('none', () => null);
    metrics.sampleOnScrape(() => {
      throw new Error('sampler down');
    });
    metrics.appendOnScrape(async () => '# TYPE bullmq_jobs gauge\nbullmq_jobs{queue="q", state="waiting"} 7');
    metrics.appendOnScrape(() => Promise.reject(new Error('redis down')));
    expect(await metrics.scrape()).toMatch(/dataagent_pool_connections\{pool="mysql",state="open"\} 3\n[^]*bullmq_jobs\{queue="q", state="waiting"\} 7\n$/);
    open = 5;
    const again = await metrics.scrape();
    expect(again).toContain('dataagent_pool_connections{pool="mysql",state="open"} 5');
    expect(again).not.toContain('pool="none"');
  });
});
