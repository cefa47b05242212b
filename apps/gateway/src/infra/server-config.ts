import { IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { IsApiKeyList } from '#core/config/api-key-spec.js';
import { Env } from '#core/config/env.js';

/** Gateway: HTTP, sockets, auth, admission. */
export class ServerConfig {
  /**
   * The gateway's listen address.
   * @defaultValue `0.0.0.0` (`npm start`: `127.0.0.1`)
   */
  @Env('DATAAGENT_HOST') @IsString() @MinLength(1)
  host = '0.0.0.0';

  /** The gateway's listen port; 0 picks a free one. */
  @Env('DATAAGENT_PORT', 'int') @IsInt({ message: 'must be an integer port' }) @Min(0) @Max(65535)
  port = 8000;

  /**
   * Gateway processes on this host, sharing its port (1 to 64); above 1, Socket.IO clients must use
   * the websocket transport. Agent workers are scaled separately.
   */
  @Env('DATAAGENT_WORKERS', 'int') @IsInt() @Min(1) @Max(64)
  workers = 1;

  /**
   * Comma-separated entries `key` (tenant `default`, a user id derived from the key) or
   * `key:tenant:user[:role]`, role `user` (default), `admin` or `operator`; clients send
   * `X-API-Key`. A key has at least 12 characters, no `:`, `,` or white space, and appears once;
   * tenant and user are not empty. A bad entry stops the gateway at startup, named by position
   * (`entry 2`), never by its key (see parseApiKeys).
   */
  @Env('DATAAGENT_API_KEYS', 'list') @IsApiKeyList()
  apiKeys: string[] = [];

  /**
   * Everyone is the same anonymous user.
   * @defaultValue `false` (`npm start` without keys: `true`)
   */
  @Env('DATAAGENT_AUTH_DISABLED', 'bool') @IsBoolean({ message: 'must be true or false' })
  authDisabled = false;

  /**
   * Requests one API key may make a minute, REST and socket messages, counted in Redis across
   * gateways; past it 429 `rate_limited` with `Retry-After`. For tenants without their own
   * `requests_per_minute`; 0: no limit.
   */
  @Env('DATAAGENT_REQUESTS_PER_MINUTE', 'int') @IsInt() @Min(0)
  requestsPerMinute = 0;

  /**
   * Runs of one tenant queued or running at once; another gets 429 `tenant_run_limit` instead of
   * queueing ahead of other tenants. For tenants without their own `max_concurrent_runs`; 0: no
   * limit. Unset: no limit with one tenant; in multi-tenant mode half of one worker's slots
   * (DATAAGENT_WORKER_CONCURRENCY), at least 1 (the gateway's `tenantRunLimit`): a gateway cannot
   * know how many workers run, but there is at least one, so whatever one tenant floods the queue
   * with, the others find at least half of even one worker free. Set it (or tenants' own) from your
   * total slots when you run many workers.
   * @defaultValue off; multi-tenant: half of `DATAAGENT_WORKER_CONCURRENCY` (`100`)
   */
  @Env('DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT', 'int') @IsOptional() @IsInt() @Min(0)
  maxConcurrentRunsPerTenant?: number;

  /**
   * Streams one API key may hold open at once, on all gateways together (counted in Redis): SSE
   * (native, AG-UI, AI SDK, A2A, OpenAI-compatible), the synchronous `POST /api/v1/chat`, plain
   * WebSockets and Socket.IO connections; another gets 429 `stream_limit` with `Retry-After`. A
   * closed stream gives its slot back at once; a dead gateway's come back within a minute; while
   * Redis does not answer, each gateway process counts alone. 0: no limit.
   */
  @Env('DATAAGENT_MAX_STREAMS_PER_KEY', 'int') @IsInt() @Min(0)
  maxStreamsPerKey = 100;

  /** Streams one person may hold open at once, whatever their keys (429 `stream_limit`); 0: no limit. */
  @Env('DATAAGENT_MAX_STREAMS_PER_USER', 'int') @IsInt() @Min(0)
  maxStreamsPerUser = 200;

  /**
   * Streams one gateway process holds open, everyone's together; another gets 503 `gateway_full`
   * with `Retry-After`. A value that leaves fewer than 1,024 descriptors for everything else stops
   * the gateway at startup. Past the open-files limit minus 512 the process closes new connections
   * at once, so the descriptor table is never the first wall.
   * @defaultValue half the process's open-files limit (`ulimit -n`)
   */
  @Env('DATAAGENT_MAX_STREAMS_PER_GATEWAY', 'int') @IsOptional() @IsInt() @Min(1)
  maxStreamsPerGateway?: number;

  /**
   * Sessions one user may keep; another gets 429 `session_limit` (delete one, or let one expire).
   * For tenants without their own `max_sessions_per_user`; 0: no limit.
   */
  @Env('DATAAGENT_MAX_SESSIONS_PER_USER', 'int') @IsInt() @Min(0)
  maxSessionsPerUser = 0;

  /**
   * Seconds (1 to 3600) a stream ticket (`POST /api/v1/runs/{run_id}/stream-tickets`) opens its
   * run's event stream for: a browser's EventSource, which cannot send a header, reconnects with it
   * meanwhile.
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

  /**
   * With auth on: `*` or the exact origins browsers may call from (REST, SSE, Socket.IO,
   * WebSocket); never with credentials. With auth off only loopback origins are served.
   */
  @Env('DATAAGENT_CORS_ORIGINS', 'list') @IsString({ each: true })
  corsOrigins: string[] = ['*'];

  /** With auth off, Host names served besides `localhost`, `127.0.0.1` and `[::1]` (and their origins). */
  @Env('DATAAGENT_ALLOWED_HOSTS', 'list') @IsString({ each: true })
  allowedHosts: string[] = [];

  /** Bytes waiting for one client (SSE, WebSocket, Socket.IO) before it is dropped as `slow_consumer`; it resumes by seq. */
  @Env('DATAAGENT_CLIENT_BUFFER_MAX_BYTES', 'int') @IsInt() @Min(1024)
  clientBufferMaxBytes = 8 * 1024 * 1024;

  /** Messages (and WebSocket pings) one socket may send per second, bursts of twice that; a flood closes the socket. */
  @Env('DATAAGENT_CLIENT_MESSAGES_PER_SECOND', 'number') @IsNumber() @Min(1)
  clientMessagesPerSecond = 50;

  /** Seconds of inactivity after which a session and its history are deleted. */
  @Env('DATAAGENT_SESSION_TIMEOUT', 'int') @IsInt() @Min(1)
  sessionTimeoutSeconds = 3600;

  /**
   * Larger chat messages get 413 `message_too_large`: the new message and every message of a
   * history a dialect brings (OpenAI `messages`, Responses `input` and `instructions`, AI SDK and
   * AG-UI `messages`, an A2A message's parts), each counted by the text it carries. A client that
   * sends back a model answer or tool result larger than this in its history needs it raised.
   * Request bodies are capped at twice this, at least 1 MiB.
   */
  @Env('DATAAGENT_MAX_MESSAGE_BYTES', 'int') @IsInt() @Min(1)
  maxMessageBytes = 64 * 1024;

  /** Queued + running runs above which new chats get 503 with Retry-After. */
  @Env('DATAAGENT_MAX_PENDING_RUNS', 'int') @IsInt() @Min(1)
  maxPendingRuns = 10_000;

  /** A chat for a session with an active run: `reject` (409), `enqueue` (runs after it), `interrupt` (cancels it). */
  @Env('DATAAGENT_MULTITASK') @IsIn(['reject', 'enqueue', 'interrupt'])
  multitask: 'reject' | 'enqueue' | 'interrupt' = 'reject';

  /** Seconds an approve_all lasts for its session; unset: DATAAGENT_SESSION_TIMEOUT (the rest of the session). */
  @Env('DATAAGENT_HITL_APPROVE_ALL_SECONDS', 'number') @IsOptional() @IsNumber({}, { message: 'must be a number of seconds' }) @Min(1)
  hitlApproveAllSeconds?: number;

  /** Seconds between plain-WebSocket pings; a client silent for two is closed. */
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

  /** How long `POST /chat` waits for its run before answering 504 (the run goes on). */
  @Env('DATAAGENT_SYNC_TIMEOUT_MS', 'int') @IsInt() @Min(100)
  syncTimeoutMs = 120_000;

  /** Serve Bull Board, the queue's dashboard, at `/admin/queues`: admins only (operators in multi-tenant mode), read-only. */
  @Env('DATAAGENT_BULL_BOARD', 'bool') @IsBoolean({ message: 'must be true or false' })
  bullBoard = false;
}
