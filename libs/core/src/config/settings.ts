import { IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, IsUrl, Max, Min, MinLength } from 'class-validator';
import { DEFAULT_TOOL_RESULT_MAX_BYTES } from '../tools/tool-output-cap.js';
import { DEFAULT_WORKSPACE_QUOTA_BYTES, DEFAULT_WORKSPACE_ROOT } from '../workspace/workspace.js';
import { IsApiKeyList } from './api-key-spec.js';
import { IsAssistantModels, IsModelName, type ModelProvider } from './model-names.js';
import { Env } from './env.js';
import { IsStdioAllowlist } from './mcp-stdio-allow.js';
import { IsOutboundAllowlist } from './outbound-allowlist.js';
import { IsSecretKey } from './secret-key.js';

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

  /** Sessions one user may keep (429 `session_limit` for another); 0: no limit. */
  @Env('DATAAGENT_MAX_SESSIONS_PER_USER', 'int') @IsInt() @Min(0)
  maxSessionsPerUser = 0;

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

  /** How long POST /chat waits for its run before answering 504. */
  @Env('DATAAGENT_SYNC_TIMEOUT_MS', 'int') @IsInt() @Min(100)
  syncTimeoutMs = 120_000;

  /** Bull Board, the queue's dashboard, at /admin/queues: admins only (operators in multi-tenant mode), read-only. */
  @Env('DATAAGENT_BULL_BOARD', 'bool') @IsBoolean({ message: 'must be true or false' })
  bullBoard = false;

  @Env('DATAAGENT_LOG_LEVEL') @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  logLevel = 'info';
}

/** Where sessions, history and runs are kept: read by the gateway and the workers alike. */
export class StoreConfig {
  @Env('DATAAGENT_SESSION_STORE') @IsIn(['mysql', 'memory'])
  sessionStore: 'mysql' | 'memory' = 'mysql';
}

export class RedisConfig {
  @Env('DATAAGENT_REDIS_URL') @IsUrl({ protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true }, { message: 'must be a redis:// or rediss:// URL' })
  url = 'redis://127.0.0.1:6379';

  /** Seconds a finished run's event log stays replayable from Redis. */
  @Env('DATAAGENT_RUN_LOG_TTL', 'int') @IsInt() @Min(1)
  runLogTtlSeconds = 3600;

  @Env('DATAAGENT_QUEUE_NAME') @IsString() @MinLength(1)
  queueName = 'dataagent-runs';
}

export class MysqlConfig {
  @Env('DATAAGENT_MYSQL_HOST') @IsString() @MinLength(1)
  host = '127.0.0.1';

  @Env('DATAAGENT_MYSQL_PORT', 'int') @IsInt() @Min(1) @Max(65535)
  port = 3306;

  @Env('DATAAGENT_MYSQL_USER') @IsString()
  user = 'dataagent';

  @Env('DATAAGENT_MYSQL_PASSWORD') @IsString()
  password = '';

  @Env('DATAAGENT_MYSQL_DATABASE') @IsString() @MinLength(1)
  database = 'dataagent';

  @Env('DATAAGENT_MYSQL_POOL_SIZE', 'int') @IsInt() @Min(1)
  poolSize = 10;
}

/** The workers' language models: providers' keys and endpoints, and which model each assistant uses. */
export class LlmConfig {
  @Env('OPENAI_API_KEY') @IsOptional() @IsString()
  openaiApiKey?: string;

  @Env('OPENAI_BASE_URL') @IsOptional() @IsUrl({ require_tld: false, require_protocol: true }, { message: 'must be an http(s) URL' })
  openaiBaseUrl?: string;

  @Env('ANTHROPIC_API_KEY') @IsOptional() @IsString()
  anthropicApiKey?: string;

  /** Anthropic's API, or a server that speaks its Messages API. */
  @Env('ANTHROPIC_BASE_URL') @IsOptional() @IsUrl({ require_tld: false, require_protocol: true }, { message: 'must be an http(s) URL' })
  anthropicBaseUrl?: string;

  /** The assistants' model unless DATAAGENT_ASSISTANT_MODELS names another: `provider:model`, `offline`, or a bare name. */
  @Env('DATAAGENT_MODEL') @IsModelName()
  model = 'gpt-4o-mini';

  /** `assistant_id=model` entries: assistants that use a model other than DATAAGENT_MODEL. */
  @Env('DATAAGENT_ASSISTANT_MODELS', 'list') @IsAssistantModels()
  assistantModels: string[] = [];

  /**
   * The provider of a model name without a `provider:` prefix. `auto`: `claude-*` is Anthropic's,
   * any other name OpenAI-compatible when OPENAI_API_KEY or OPENAI_BASE_URL is set, and the
   * offline model otherwise. `offline` forces the offline model for such names.
   */
  @Env('DATAAGENT_LLM_PROVIDER') @IsIn(['auto', 'openai', 'anthropic', 'offline'])
  provider: 'auto' | ModelProvider = 'auto';

  @Env('DATAAGENT_LLM_TIMEOUT_MS', 'int') @IsInt() @Min(100)
  timeoutMs = 120_000;

  /** Most tokens one model answer may have (Anthropic's API requires a limit). */
  @Env('DATAAGENT_LLM_MAX_TOKENS', 'int') @IsInt() @Min(1)
  maxTokens = 4096;
}

export class WorkerConfig {
  /** Runs one worker process holds at once; runs waiting for approval hold a slot too. */
  @Env('DATAAGENT_WORKER_CONCURRENCY', 'int') @IsInt() @Min(1) @Max(10_000)
  concurrency = 200;

  @Env('DATAAGENT_WORKER_ID') @IsOptional() @IsString()
  workerId?: string;

  /**
   * Milliseconds a run's job lock lasts unrenewed (renewed every half of it): after a worker
   * dies, its runs continue on another worker within this plus one stalled check (a sixth of
   * it, at most 0.5 s). A worker whose event loop stalls longer loses its runs to another
   * worker, which fences it off.
   */
  @Env('DATAAGENT_JOB_LOCK_MS', 'int') @IsInt() @Min(500)
  jobLockMs = 3_000;

  /**
   * Milliseconds within which a run's text deltas that queued up while its previous event was
   * being published are joined into one `text` event (at most 10; 0: every delta its own event).
   * A delta is never held back to wait for others, and never joined across a tool call or the end.
   */
  @Env('DATAAGENT_TEXT_COALESCE_MS', 'int') @IsInt() @Min(0) @Max(10)
  textCoalesceMs = 10;

  /** Seconds a stopping worker (SIGTERM) lets its runs finish before handing them back to the queue. */
  @Env('DATAAGENT_DRAIN_SECONDS', 'number') @IsNumber() @Min(0)
  drainSeconds = 20;

  /**
   * The port of the worker's liveness and readiness probes (`/health/live`, `/health/ready`); 0
   * picks a free one. Unset: no probe server (several workers on one host need no fixed port).
   */
  @Env('DATAAGENT_HEALTH_PORT', 'int') @IsOptional() @IsInt({ message: 'must be an integer port' }) @Min(0) @Max(65535)
  healthPort?: number;

  /** Milliseconds between sweeps for runs nobody holds (one worker sweeps at a time); a run is a candidate after twice this. */
  @Env('DATAAGENT_REAPER_INTERVAL_MS', 'int') @IsInt() @Min(100)
  reaperIntervalMs = 30_000;

  @Env('DATAAGENT_MAX_TOOL_CALLS', 'int') @IsInt() @Min(1)
  maxToolCallsPerTurn = 3;

  @Env('DATAAGENT_MAX_ITERATIONS', 'int') @IsInt() @Min(1)
  maxIterations = 10;

  /** UTF-8 bytes of earlier conversation a run sends the model; the newest messages are kept. */
  @Env('DATAAGENT_HISTORY_MAX_BYTES', 'int') @IsInt() @Min(1024)
  historyMaxBytes = 512 * 1024;

  /** Seconds to wait for a person's approval before it counts as reject. */
  @Env('DATAAGENT_HITL_TIMEOUT', 'number') @IsNumber({}, { message: 'must be a number of seconds' }) @Min(0.05)
  hitlTimeoutSeconds = 300;

  /**
   * Seconds a run waiting for a person's approval stays on its worker before it parks: gives its
   * worker slot back and continues on whichever worker takes it once the answer (or the
   * expiry) comes. 0 parks at once; a longer wait saves quick answers the continuation.
   */
  @Env('DATAAGENT_HITL_PARK_AFTER', 'number') @IsNumber({}, { message: 'must be a number of seconds' }) @Min(0)
  hitlParkAfterSeconds = 0;

  /** Parse <tool_action> tags in the model's text (enableToolActionParsing). */
  @Env('DATAAGENT_TOOL_ACTION_PARSING', 'bool') @IsBoolean({ message: 'must be true or false' })
  enableToolActionParsing = true;

  /** Run the JSON form `{"response", "tool_call": {"name", "arguments"}}` in the model's text (seed 001). */
  @Env('DATAAGENT_JSON_TOOL_CALLS', 'bool') @IsBoolean({ message: 'must be true or false' })
  enableJsonToolCalls = true;

  /** Describe the tools in the system prompt with the <tool_action> syntax (for models without native tool calls). */
  @Env('DATAAGENT_TOOL_PROMPT', 'bool') @IsBoolean({ message: 'must be true or false' })
  toolPrompt = false;

  /** Tool names that need approval; empty: each tool's own sensitivity; "none": nothing. */
  @Env('DATAAGENT_HITL_TOOLS', 'list') @IsString({ each: true })
  hitlTools: string[] = [];

  @Env('DATAAGENT_LOG_LEVEL') @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  logLevel = 'info';
}

/** Built-in tools: outbound HTTP policy, shell, web search. Workspace settings: see WorkspaceConfig. */
export class ToolsConfig {
  /**
   * Hosts, IPs, CIDRs or host:port that outbound tools, and users' remote MCP servers, may reach
   * although private or loopback.
   */
  @Env('DATAAGENT_OUTBOUND_ALLOWLIST', 'list') @IsOutboundAllowlist()
  outboundAllowlist: string[] = [];

  @Env('DATAAGENT_SHELL_ENABLED', 'bool') @IsBoolean({ message: 'must be true or false' })
  shellEnabled = false;

  @Env('TAVILY_API_KEY') @IsOptional() @IsString()
  tavilyApiKey?: string;

  /** Default per-tool timeout in milliseconds. */
  @Env('DATAAGENT_TOOL_TIMEOUT_MS', 'int') @IsInt() @Min(1)
  toolTimeoutMs = 30_000;

  /** UTF-8 bytes of one tool result (any tool) before it is cut with a marker; read_file pages fit in it. */
  @Env('DATAAGENT_TOOL_RESULT_MAX_BYTES', 'int') @IsInt() @Min(1024)
  toolResultMaxBytes = DEFAULT_TOOL_RESULT_MAX_BYTES;
}

/**
 * Tenants: with several, each has its own limits and feature switches (`tenants`, managed by
 * operators), and every per-user path must name the tenant.
 */
export class TenancyConfig {
  /**
   * Several tenants share this deployment (Req 35.1): tenants' own settings apply, and a
   * workspace template without {tenant_id} is refused. Off: one default tenant, limits from the environment.
   */
  @Env('DATAAGENT_MULTI_TENANT', 'bool') @IsBoolean({ message: 'must be true or false' })
  multiTenant = false;

  /** Seconds a gateway or worker trusts what it read of a tenant's settings: a change applies everywhere within this. */
  @Env('DATAAGENT_TENANT_CACHE_SECONDS', 'number') @IsNumber() @Min(0) @Max(300)
  tenantCacheSeconds = 5;

  /** Distinct users with live issued keys one tenant may have, for tenants without their own max_users; 0: no limit. */
  @Env('DATAAGENT_MAX_USERS_PER_TENANT', 'int') @IsInt() @Min(0)
  maxUsersPerTenant = 0;
}

/** Users' workspaces (seed 002, Req 33): where they live, what they may hold, when they are archived. */
export class WorkspaceConfig {
  /** `{tenant_id}` and `{user_id}` become sanitised ids; without `{user_id}` each user's folder goes below it. */
  @Env('DATAAGENT_WORKSPACE_ROOT') @IsString() @MinLength(1)
  rootTemplate = DEFAULT_WORKSPACE_ROOT;

  @Env('DATAAGENT_WORKSPACE_QUOTA', 'bytes') @IsInt({ message: 'must be a size: bytes, or with a unit (500MB, 2GB, 1GiB)' }) @Min(1)
  quotaBytes = DEFAULT_WORKSPACE_QUOTA_BYTES;

  /** Days without a change after which a workspace folder is packed into `<folder>.tar.gz`; 0: never. */
  @Env('DATAAGENT_WORKSPACE_ARCHIVE_DAYS', 'number') @IsNumber({}, { message: 'must be a number of days' }) @Min(0)
  archiveDays = 30;

  /** Seconds between archive sweeps; one worker sweeps at a time. */
  @Env('DATAAGENT_WORKSPACE_ARCHIVE_INTERVAL_SECONDS', 'number') @IsNumber({}, { message: 'must be a number of seconds' }) @Min(0.1)
  archiveIntervalSeconds = 3600;
}

/**
 * Long-term memory and skills. Notes live in the database; `storageRoot` is only where earlier
 * versions kept them on disk (a worker moves them into the database when it starts).
 */
export class StorageConfig {
  @Env('DATAAGENT_STORAGE_ROOT') @IsString() @MinLength(1)
  storageRoot = '/data';

  @Env('DATAAGENT_MEMORY_RETENTION_DAYS', 'number') @IsNumber() @Min(0.0001)
  memoryRetentionDays = 90;

  /** Folder of skills (one subfolder with SKILL.md each); missing: no skills. */
  @Env('DATAAGENT_SKILLS_DIR') @IsString() @MinLength(1)
  skillsDir = 'skills';
}

/** Secrets at rest (users' MCP server env and header values): read by the gateway and the workers alike. */
export class SecretsConfig {
  /**
   * AES-256 key, 64 hex characters or base64 of 32 bytes. Unset: secrets cannot be stored
   * (`npm start` generates one and keeps it in .data/secret.key).
   */
  @Env('DATAAGENT_SECRET_KEY') @IsOptional() @IsSecretKey()
  secretKey?: string;
}

/** MCP servers users register themselves: what the gateway accepts, and what workers hold per user. */
export class McpConfig {
  /** A user's own servers: the API refuses more, and a worker's pool holds at most this many connections per user. */
  @Env('DATAAGENT_MCP_MAX_SERVERS_PER_USER', 'int') @IsInt() @Min(1) @Max(100)
  maxServersPerUser = 5;

  /**
   * stdio commands a user may register, as written (parse with `parseStdioAllowlist`): programs
   * and folders matched by real path, launchers only with pinned arguments, and the env names
   * each may set. Empty: users register remote servers only.
   */
  @Env('DATAAGENT_MCP_STDIO_ALLOW') @IsStdioAllowlist()
  stdioAllow = '';
}

/** Prometheus metrics: `/metrics` on each gateway, a small port of its own on each worker. */
export class MetricsConfig {
  /** Off: no `/metrics` route on the gateway and no metrics port on the workers. */
  @Env('DATAAGENT_METRICS_ENABLED', 'bool') @IsBoolean({ message: 'must be true or false' })
  enabled = true;

  /** When set, a scrape needs `Authorization: Bearer <token>` (gateway and workers alike). Unset: anyone who reaches the port may read the metrics. */
  @Env('DATAAGENT_METRICS_TOKEN') @IsOptional() @IsString() @MinLength(16, { message: 'must be at least 16 characters' })
  token?: string;

  /** Workers: the port of their metrics server; 0 picks a free one (its address is printed at startup). */
  @Env('DATAAGENT_METRICS_PORT', 'int') @IsInt({ message: 'must be an integer port' }) @Min(0) @Max(65535)
  port = 9464;

  /** Workers: the address their metrics server binds (all interfaces, so Prometheus can reach the pod). */
  @Env('DATAAGENT_METRICS_HOST') @IsString() @MinLength(1)
  host = '0.0.0.0';
}
