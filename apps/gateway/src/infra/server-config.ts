import { IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { IsApiKeyList } from '#core/config/api-key-spec.js';
import { Env } from '#core/config/env.js';

/** Gateway: HTTP, sockets, auth, admission. */
export class ServerConfig {
  @Env('DATAAGENT_HOST') @IsString() @MinLength(1)
  host = '0.0.0.0';

  @Env('DATAAGENT_PORT', 'int') @IsInt({ message: 'must be an integer port' }) @Min(0) @Max(65535)
  port = 8000;

  @Env('DATAAGENT_WORKERS', 'int') @IsInt() @Min(1) @Max(64)
  workers = 1;

  /** Entries `key` or `key:tenant:user[:role]`; see parseApiKeys for the rules. */
  @Env('DATAAGENT_API_KEYS', 'list') @IsApiKeyList()
  apiKeys: string[] = [];

  @Env('DATAAGENT_AUTH_DISABLED', 'bool') @IsBoolean({ message: 'must be true or false' })
  authDisabled = false;

  /** Requests a minute one API key may make, on all gateways together (429 `rate_limited` past it); 0: no limit. */
  @Env('DATAAGENT_REQUESTS_PER_MINUTE', 'int') @IsInt() @Min(0)
  requestsPerMinute = 0;

  /**
   * Runs of one tenant queued or running at once; another gets 429 `tenant_run_limit` instead of
   * queueing ahead of other tenants. 0: no limit. Unset: no limit with one tenant; in multi-tenant
   * mode half of DATAAGENT_WORKER_CONCURRENCY (the gateway's `tenantRunLimit`).
   */
  @Env('DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT', 'int') @IsOptional() @IsInt() @Min(0)
  maxConcurrentRunsPerTenant?: number;

  /**
   * Streams one API key may hold open at once on all gateways together: SSE (the native stream,
   * AG-UI, the AI SDK's, A2A's, the OpenAI-compatible ones), plain WebSockets and Socket.IO
   * connections. Another gets 429 `stream_limit`; closing one gives its slot back. 0: no limit.
   */
  @Env('DATAAGENT_MAX_STREAMS_PER_KEY', 'int') @IsInt() @Min(0)
  maxStreamsPerKey = 100;

  /** Streams one person may hold open at once, whatever their keys (429 `stream_limit`); 0: no limit. */
  @Env('DATAAGENT_MAX_STREAMS_PER_USER', 'int') @IsInt() @Min(0)
  maxStreamsPerUser = 200;

  /**
   * Streams one gateway process holds open at once, everyone's together; another gets 503
   * `gateway_full` with Retry-After, well before the process runs out of file descriptors.
   * Unset: half the process's open-files limit. A gateway whose setting leaves fewer than 1,024
   * descriptors for everything else does not start.
   */
  @Env('DATAAGENT_MAX_STREAMS_PER_GATEWAY', 'int') @IsOptional() @IsInt() @Min(1)
  maxStreamsPerGateway?: number;

  /** Sessions one user may keep (429 `session_limit` for another); 0: no limit. */
  @Env('DATAAGENT_MAX_SESSIONS_PER_USER', 'int') @IsInt() @Min(0)
  maxSessionsPerUser = 0;

  /**
   * Seconds a stream ticket (POST /api/v1/runs/{run_id}/stream-tickets) opens its run's event
   * stream for: a browser's EventSource, which cannot send a header, reconnects with it meanwhile.
   */
  @Env('DATAAGENT_STREAM_TICKET_SECONDS', 'number') @IsNumber() @Min(1) @Max(3600)
  streamTicketSeconds = 60;

  /**
   * Where browsers and authorization servers reach this gateway (`https://agents.example.com`):
   * the redirect URI of MCP sign-ins and the URL of DataAgent's client metadata document (used
   * as its client_id where the URL is https). Unset: `http://localhost:<port>`.
   */
  @Env('DATAAGENT_PUBLIC_URL') @IsOptional() @IsString()
  publicUrl?: string;

  /** Seconds a gateway trusts what it read about an issued key: a revocation applies everywhere within this. */
  @Env('DATAAGENT_API_KEY_CACHE_SECONDS', 'number') @IsNumber() @Min(0) @Max(60)
  apiKeyCacheSeconds = 2;

  @Env('DATAAGENT_CORS_ORIGINS', 'list') @IsString({ each: true })
  corsOrigins: string[] = ['*'];

  /** Host names served besides loopback while auth is off (the quick start answers only loopback). */
  @Env('DATAAGENT_ALLOWED_HOSTS', 'list') @IsString({ each: true })
  allowedHosts: string[] = [];

  /** Bytes of events buffered for one client before it is dropped as a slow consumer (it resumes by seq). */
  @Env('DATAAGENT_CLIENT_BUFFER_MAX_BYTES', 'int') @IsInt() @Min(1024)
  clientBufferMaxBytes = 8 * 1024 * 1024;

  /** Messages per second one socket may send (a burst of twice as many); a flood closes it. */
  @Env('DATAAGENT_CLIENT_MESSAGES_PER_SECOND', 'number') @IsNumber() @Min(1)
  clientMessagesPerSecond = 50;

  @Env('DATAAGENT_SESSION_TIMEOUT', 'int') @IsInt() @Min(1)
  sessionTimeoutSeconds = 3600;

  @Env('DATAAGENT_MAX_MESSAGE_BYTES', 'int') @IsInt() @Min(1)
  maxMessageBytes = 64 * 1024;

  /** Queued + running runs above which new chats get 503 with Retry-After. */
  @Env('DATAAGENT_MAX_PENDING_RUNS', 'int') @IsInt() @Min(1)
  maxPendingRuns = 10_000;

  /** What a chat does while its session has an active run: reject (409), enqueue, or interrupt. */
  @Env('DATAAGENT_MULTITASK') @IsIn(['reject', 'enqueue', 'interrupt'])
  multitask: 'reject' | 'enqueue' | 'interrupt' = 'reject';

  /** Seconds an approve_all lasts for its session; unset: DATAAGENT_SESSION_TIMEOUT (the rest of the session). */
  @Env('DATAAGENT_HITL_APPROVE_ALL_SECONDS', 'number') @IsOptional() @IsNumber({}, { message: 'must be a number of seconds' }) @Min(1)
  hitlApproveAllSeconds?: number;

  /** Seconds between WebSocket heartbeats; a client silent for two is closed. */
  @Env('DATAAGENT_WS_HEARTBEAT', 'number') @IsNumber() @Min(0.05)
  wsHeartbeatSeconds = 30;

  /**
   * Calls that need approval in runs from the OpenAI-compatible API, where nobody can be asked:
   * `reject` (the model is told and goes on) or `approve`.
   */
  @Env('DATAAGENT_OPENAI_APPROVALS') @IsIn(['reject', 'approve'])
  openAiApprovals: 'reject' | 'approve' = 'reject';

  /**
   * Seconds after its last activity that the session of a stateless `/v1/chat/completions` call
   * (one without X-DataAgent-Session) is deleted, once no run of it goes on. A client that
   * continues it with X-DataAgent-Session keeps it (DATAAGENT_SESSION_TIMEOUT then applies).
   */
  @Env('DATAAGENT_OPENAI_SESSION_TTL', 'int') @IsInt() @Min(1)
  openAiSessionTtlSeconds = 600;

  /** How long POST /chat waits for its run before answering 504. */
  @Env('DATAAGENT_SYNC_TIMEOUT_MS', 'int') @IsInt() @Min(100)
  syncTimeoutMs = 120_000;

  /** Bull Board, the queue's dashboard, at /admin/queues: admins only (operators in multi-tenant mode), read-only. */
  @Env('DATAAGENT_BULL_BOARD', 'bool') @IsBoolean({ message: 'must be true or false' })
  bullBoard = false;
}
