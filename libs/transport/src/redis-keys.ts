/**
 * Redis key layout. A run's keys share a hash tag so the append script touches one slot
 * (Redis Cluster safe).
 */
export const redisKeys = {
  runSeq: (runId: string) => `da:run:{${runId}}:seq`,
  runLog: (runId: string) => `da:run:{${runId}}:log`,
  runDone: (runId: string) => `da:run:{${runId}}:done`,
  runCancel: (runId: string) => `da:run:{${runId}}:cancel`,
  sessionAdmission: (sessionId: string) => `da:session:{${sessionId}}:admission`,
  sessionChannel: (sessionId: string) => `da:events:${sessionId}`,
  controlChannel: 'da:control',
  hitlRequest: (requestId: string) => `da:hitl:{${requestId}}`,
  sessionApproveAll: (sessionId: string) => `da:session:{${sessionId}}:approve-all`,
} as const;
