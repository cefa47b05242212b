import { loadGatewaySettings } from './gateway-config.js';

const limitWith = (env: NodeJS.ProcessEnv, argv: string[] = []) => loadGatewaySettings('0.0.0', env, argv).tenantRunLimit;

describe('the run limit of a tenant without its own max_concurrent_runs', () => {
  it('is off with one tenant unless set', () => {
    expect(limitWith({})).toBe(0);
    expect(limitWith({ DATAAGENT_WORKER_CONCURRENCY: '8' })).toBe(0);
    expect(limitWith({ DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '7' })).toBe(7);
  });

  it('is half of one worker\'s slots in multi-tenant mode, at least one', () => {
    expect(limitWith({ DATAAGENT_MULTI_TENANT: 'true' })).toBe(100);
    expect(limitWith({ DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_WORKER_CONCURRENCY: '5' })).toBe(2);
    expect(limitWith({ DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_WORKER_CONCURRENCY: '1' })).toBe(1);
    expect(limitWith({ DATAAGENT_MULTI_TENANT: 'true' }, ['--worker-concurrency', '40'])).toBe(20);
  });

  it('is what DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT says when set, 0 meaning no limit', () => {
    expect(limitWith({ DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '0' })).toBe(0);
    expect(limitWith({ DATAAGENT_MULTI_TENANT: 'true', DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '3', DATAAGENT_WORKER_CONCURRENCY: '100' })).toBe(3);
    expect(() => limitWith({ DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT: '-1' })).toThrow(/DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT/);
  });
});
