import { runPortsContract, type RunPortsUnderTest } from '#test/support/run-ports-contract.js';
import { harnessRedisUrl } from '#test/support/harness-redis.js';
import { createRedis, type RedisClient } from './redis-connection.js';
import { HitlRequests } from './hitl-requests.js';
import { RunEventLog } from './run-event-log.js';
import { RedisRunLedger } from './run-ledger.js';
import { RedisRunBudgets } from './run-budgets.js';

/** The Redis adapters of the run's ports against the harness Redis, held to the memory backend's contract. */

let redis: RedisClient;
let ports: RunPortsUnderTest;

beforeAll(() => {
  redis = createRedis(harnessRedisUrl(), 'spec-run-ports');
  ports = { log: new RunEventLog(redis, { retentionSeconds: 600 }), ledger: new RedisRunLedger(redis, 600), hitl: new HitlRequests(redis, 600), budgets: new RedisRunBudgets(redis) };
});

afterAll(async () => {
  await redis?.quit();
});

runPortsContract('redis', () => ports);
