/**
 * Redis key layout. Every key and channel that one script or transaction touches together
 * shares a hash tag, so on a Redis Cluster it lives in one slot: a run's keys and its event
 * channel carry the run id, a session's keys the session id, a user's MCP keys the tenant and
 * user. The few keys without a tag (leases, tickets, pending sign-ins) are each used alone.
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
  /** Each append's id → the seq it got: an append sent again after its answer was lost is not appended twice. */
  runAppends: (runId: string) => `da:run:{${runId}}:appends`,
  /** Intents of the run's tool calls with side effects, by call id and argument hash. */
  runCalls: (runId: string) => `da:run:{${runId}}:calls`,
  /** A parked run's wait: JSON {seq, request_id, tool_call_id, until}; the worker that takes the run next consumes it. */
  runParked: (runId: string) => `da:run:{${runId}}:parked`,
  /** One worker sweeps for runs nobody holds at a time: this lease says which. */
  reaperLock: 'da:reaper:lock',
  /**
   * A queue's parked runs by the deadline of the question each waits on: a sorted set of JSON
   * `[run_id, session_id, tenant_id]` → `expires_at` (ms). Per queue, as its jobs are: only the
   * processes of that queue can remove a run's job. Used alone (no script touches it with a
   * run's keys).
   */
  parkedRunDeadlines: (queueName: string) => `da:queue:{${queueName}}:parked-deadlines`,
  /** One gateway or worker of a queue sweeps its parked runs' deadlines at a time: this lease says which. */
  parkedRunSweepLease: (queueName: string) => `da:queue:{${queueName}}:parked-sweep-lease`,
  /** One worker archives idle workspaces of a root at a time, once an interval: the lease per root (a hash of its template). */
  workspaceArchiveLease: (rootScope: string) => `da:workspace-archive:${rootScope}:lease`,
  /** An OpenAI-compatible request's Idempotency-Key, per caller (the key hashed): JSON {body, run_id?, session_id?}. */
  openAiIdempotency: (tenantId: string, userId: string, keyHash: string) => `da:openai:{${tenantId}:${userId}}:idempotency:${keyHash}`,
  /**
   * A stream ticket, by the SHA-256 of the ticket (never the ticket): JSON {tenant_id, user_id,
   * role, key_id?, path}, expiring with the ticket. Any gateway redeems it.
   */
  streamTicket: (ticketHash: string) => `da:stream-ticket:${ticketHash}`,
  /** Prefix of the requests-per-minute counters (rate-limiter-flexible adds the tenant and user). */
  quotaRequestsPerMinutePrefix: 'da:quota:rpm',
  /** Runs a tenant has going (its concurrent-runs quota): a sorted set of run id → admitted at (ms). */
  tenantRuns: (tenantId: string) => `da:tenant:{${tenantId}}:runs`,
  /**
   * One budget's counter for one period (RedisRunBudgets): a hash of `spent`, `reserved` and one
   * field per reservation (run id and call number), expiring a day after its period ends. Tagged
   * with the tenant, as is each run's list of reservations: one call's scripts touch one slot.
   * `subject` is the person of a user budget, '' for the tenant's own.
   */
  budgetCounter: (tenantId: string, metric: string, period: string, periodKey: string, subject: string) =>
    `da:budget:{${tenantId}}:${metric}:${period}:${periodKey}:${subject === '' ? 'tenant' : `user:${subject}`}`,
  /** The reservations a run holds on its budgets: a set of "counter\nfield", given back when the run is taken over or ends. */
  budgetRunReservations: (tenantId: string, runId: string) => `da:budget:{${tenantId}}:run:${runId}`,
  /**
   * Streams an API key holds open (SSE, WebSocket, Socket.IO) on every gateway: a sorted set of
   * slot → lease end (ms). Tagged with its person, whose set one script checks with it.
   */
  keyStreams: (tenantId: string, userId: string, keyId: string) => `da:streams:{${tenantId}:${userId}}:key:${keyId}`,
  /** Streams a person holds open on every gateway, whatever the key: a sorted set of slot → lease end (ms). */
  personStreams: (tenantId: string, userId: string) => `da:streams:{${tenantId}:${userId}}:person`,
  sessionAdmission: (sessionId: string) => `da:session:{${sessionId}}:admission`,
  /** The session's runs that have no done yet: a hash of run id → owner (JSON `[tenant_id, user_id]`), for cancels that need no database. */
  sessionActiveRuns: (sessionId: string) => `da:session:{${sessionId}}:active-runs`,
  /** A run's events, live: each appended event's JSON, published by the append script (sharded on a cluster). */
  runChannel: (runId: string) => `da:run:{${runId}}:events`,
  controlChannel: 'da:control',
  hitlRequest: (requestId: string) => `da:hitl:{${requestId}}`,
  /**
   * An MCP server's elicitation waiting for its person: a hash of run, session, owner, mode,
   * the form's schema, expiry, and once answered the action, content and reason.
   */
  elicitationRequest: (requestId: string) => `da:elicit:{${requestId}}`,
  sessionApproveAll: (sessionId: string) => `da:session:{${sessionId}}:approve-all`,
  /**
   * A user's MCP server statuses, as workers last saw them: a hash of server name → JSON
   * {status, last_error, tool_count, last_check, worker_id}, expiring unless refreshed.
   */
  mcpStatus: (tenantId: string, userId: string) => `da:mcp:{${tenantId}:${userId}}:status`,
  /** Raised on every change to a user's MCP servers: workers reload them when it moves. */
  mcpConfigVersion: (tenantId: string, userId: string) => `da:mcp:{${tenantId}:${userId}}:version`,
  /** One worker refreshes a person's sign-in to one server at a time: the lock's holder token, expiring with it. */
  mcpOAuthRefreshLock: (tenantId: string, userId: string, server: string) => `da:mcp:{${tenantId}:${userId}}:oauth-refresh:${server}`,
  /**
   * A sign-in between its start and the authorization server's redirect back, by its `state`:
   * JSON {tenant_id, user_id, server_name, return_to?, pending}, taken once (the PKCE verifier stays here).
   */
  mcpOAuthPending: (state: string) => `da:mcp-oauth:pending:${state}`,
  /** Raised on every change to a tenant's MCP tool bindings: workers reload them when it moves. */
  toolBindingsVersion: (tenantId: string) => `da:bindings:{${tenantId}}:version`,
  /** Events for all of one user's sockets, on every gateway: JSON {tenant_id, user_id, event}. */
  userEventsChannel: 'da:user-events',
  /** Tells workers to close MCP connections: JSON {tenant_id, user_id, server_name?, reason}. */
  mcpReleaseChannel: 'da:mcp:release',
  /** The model each assistant runs on, as the workers of a queue last announced: a hash of assistant id → model id. */
  assistantModels: (queueName: string) => `da:queue:{${queueName}}:assistant-models`,
} as const;

/**
 * The BullMQ prefix of the run queue. On a cluster every key of a queue must share a slot, so
 * the prefix is a hash tag there (as BullMQ documents); a single Redis keeps BullMQ's default,
 * so an existing deployment's queued jobs stay where they are.
 */
export function queuePrefix(cluster: boolean): string {
  return cluster ? '{da-queue}' : 'bull';
}
