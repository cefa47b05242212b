import type { Worker } from 'node:cluster';
import { Counter, Registry } from 'prom-client';
import { ClusterMetricsAggregator } from './cluster-metrics.js';

/** A gateway process as the primary sees it: answers a collection with its registry, or never. */
function fakeProcess(id: number, requests: number, answers = true) {
  const registry = new Registry();
  new Counter({ name: 'dataagent_http_requests_total', help: 'requests', registers: [registry] }).inc(requests);
  const worker = {
    id,
    process: { pid: 1000 + id },
    isConnected: () => true,
    send: (message: { type: string; id: number }) => {
      if (!answers) return true;
      void registry.getMetricsAsJSON().then((metrics) => aggregator.handle(worker as unknown as Worker, { type: 'dataagent:metrics:collected', id: message.id, metrics }));
      return true;
    },
  };
  return worker as unknown as Worker;
}

let aggregator: ClusterMetricsAggregator;

describe('ClusterMetricsAggregator', () => {
  it('sums the registries of every serving process, with its own figures', async () => {
    const processes = [fakeProcess(1, 3), fakeProcess(2, 4)];
    aggregator = new ClusterMetricsAggregator(() => processes);
    aggregator.processes.set(2);
    const text = await aggregator.aggregate();
    expect(text).toMatch(/^dataagent_http_requests_total 7$/m);
    expect(text).toMatch(/^dataagent_gateway_processes 2$/m);
  });

  it('fails rather than answer a partial sum when a process does not report', async () => {
    const processes = [fakeProcess(1, 3), fakeProcess(2, 4, false)];
    aggregator = new ClusterMetricsAggregator(() => processes, 50);
    await expect(aggregator.aggregate()).rejects.toThrow('gateway process(es) 1002 did not report their metrics within 50 ms');
  });

  it('stops waiting for a process that exited', async () => {
    const silent = fakeProcess(2, 4, false);
    const processes = [fakeProcess(1, 3), silent];
    aggregator = new ClusterMetricsAggregator(() => processes, 60_000);
    const text = aggregator.aggregate();
    aggregator.forget(silent);
    expect(await text).toMatch(/^dataagent_http_requests_total 3$/m);
  });

  it('leaves messages that are not about metrics to others', () => {
    aggregator = new ClusterMetricsAggregator(() => []);
    expect(aggregator.handle(fakeProcess(1, 0), { type: 'something else', id: 1 })).toBe(false);
    expect(aggregator.handle(fakeProcess(1, 0), 'text')).toBe(false);
  });
});
