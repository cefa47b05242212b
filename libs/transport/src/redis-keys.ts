/**
 * Redis key layout. A run's keys share a hash tag so the append script touches one slot
 * (Redis Cluster safe).
 */
export const redisKeys = {
  runSeq: (runId: string) => `da:run:{${runId}}:seq`,
  runLog: (runId: string) => `da:run:{${runId}}:log`,
  runDone: (runId: string) => `da:run:{${runId}}:done`,
  runCancel: (runId: string) => `da:run:{${runId}}:cancel`,
  /** The run's owner epoch: raised by each worker that takes the run; appends carry it (fencing). */
  runOwner: (runId: string) => `da:run:{${runId}}:owner`,
  /** The run's recorded steps (messages it added), in order. */
  runSteps: (runId: string) => `da:run:{${runId}}:steps`,
  /** Intents of the run's tool calls with side effects, by call id and argument hash. */
  runCalls: (runId: string) => `da:run:{${runId}}:calls`,
  sessionAdmission: (sessionId: string) => `da:session:{${sessionId}}:admission`,
  sessionChannel: (sessionId: string) => `da:events:${sessionId}`,
  controlChannel: 'da:control',
  hitlRequest: (requestId: string) => `da:hitl:{${requestId}}`,
  sessionApproveAll: (sessionId: string) => `da:session:{${sessionId}}:approve-all`,
} as const;
