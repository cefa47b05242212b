import { IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength } from 'class-validator';
import { IsAssistantModels, IsModelName, type ModelProvider } from './model-names.js';
import { Env } from './env.js';
import { IsSecretKey } from './secret-key.js';

/** How much the gateway and the workers log (pino's levels). */
export class LogConfig {
  /**
   * `fatal` … `trace`, `silent`; logs are JSON lines (pino). A request's lines carry its
   * `request_id`; its access line names method, path, remote address and status, never headers.
   */
  @Env('DATAAGENT_LOG_LEVEL') @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  level = 'info';
}

/** Where sessions, history and runs are kept: read by the gateway and the workers alike. */
export class StoreConfig {
  /** `mysql`, or `memory` (one process only: not usable with separate gateway and worker). */
  @Env('DATAAGENT_SESSION_STORE') @IsIn(['mysql', 'memory'])
  sessionStore: 'mysql' | 'memory' = 'mysql';
}

/** The Redis every gateway and worker shares: the queue, runs' event logs and ledgers, control messages, limits. */
export class RedisConfig {
  /** The `redis://` or `rediss://` URL of the Redis every gateway and worker shares. */
  @Env('DATAAGENT_REDIS_URL') @IsUrl({ protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true }, { message: 'must be a redis:// or rediss:// URL' })
  url = 'redis://127.0.0.1:6379';

  /** Seconds a finished run's event log stays replayable from Redis (MySQL keeps the events after). */
  @Env('DATAAGENT_RUN_LOG_TTL', 'int') @IsInt() @Min(1)
  runLogTtlSeconds = 3600;

  /** The BullMQ queue of runs; its backlog is the Redis list `bull:<name>:wait` (`{da-queue}:<name>:wait` on a cluster). */
  @Env('DATAAGENT_QUEUE_NAME') @IsString() @MinLength(1)
  queueName = 'dataagent-runs';

  /**
   * Seed nodes of a Redis Cluster (`host:port`, comma-separated): set, every process runs on the
   * cluster, with the user name, password and TLS of DATAAGENT_REDIS_URL (its host is unused).
   * Empty: the single Redis at DATAAGENT_REDIS_URL.
   */
  @Env('DATAAGENT_REDIS_CLUSTER_NODES', 'list') @Matches(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, { each: true, message: 'must be host:port entries, comma-separated' })
  clusterNodes: string[] = [];
}

/** The MySQL or MariaDB database of sessions, history, runs, tenants and the MCP catalog; the schema is migrated at startup. */
export class MysqlConfig {
  /** Host of the MySQL or MariaDB server. */
  @Env('DATAAGENT_MYSQL_HOST') @IsString() @MinLength(1)
  host = '127.0.0.1';

  /** Port of the MySQL or MariaDB server. */
  @Env('DATAAGENT_MYSQL_PORT', 'int') @IsInt() @Min(1) @Max(65535)
  port = 3306;

  /** MySQL user. */
  @Env('DATAAGENT_MYSQL_USER') @IsString()
  user = 'dataagent';

  /** MySQL password. */
  @Env('DATAAGENT_MYSQL_PASSWORD') @IsString()
  password = '';

  /** MySQL database. */
  @Env('DATAAGENT_MYSQL_DATABASE') @IsString() @MinLength(1)
  database = 'dataagent';

  /** MySQL connections per process. */
  @Env('DATAAGENT_MYSQL_POOL_SIZE', 'int') @IsInt() @Min(1)
  poolSize = 10;
}

/** The workers' language models: providers' keys and endpoints, and which model each assistant uses. */
export class LlmConfig {
  /** OpenAI key (or the key of the server at OPENAI_BASE_URL). */
  @Env('OPENAI_API_KEY') @IsOptional() @IsString()
  openaiApiKey?: string;

  /** Any OpenAI-compatible endpoint, used instead of OpenAI's. */
  @Env('OPENAI_BASE_URL') @IsOptional() @IsUrl({ require_tld: false, require_protocol: true }, { message: 'must be an http(s) URL' })
  openaiBaseUrl?: string;

  /** Anthropic key. */
  @Env('ANTHROPIC_API_KEY') @IsOptional() @IsString()
  anthropicApiKey?: string;

  /**
   * Anthropic's API, or another server that speaks its Messages API.
   * @defaultValue `https://api.anthropic.com`
   */
  @Env('ANTHROPIC_BASE_URL') @IsOptional() @IsUrl({ require_tld: false, require_protocol: true }, { message: 'must be an http(s) URL' })
  anthropicBaseUrl?: string;

  /**
   * The assistants' model unless DATAAGENT_ASSISTANT_MODELS names another: `provider:model`
   * (`openai:…`, `anthropic:…`), `offline`, or a bare name (`claude-*` is Anthropic's).
   */
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

  /** Milliseconds one LLM request may take. */
  @Env('DATAAGENT_LLM_TIMEOUT_MS', 'int') @IsInt() @Min(100)
  timeoutMs = 120_000;

  /**
   * Most tokens one model answer may have (Anthropic's API requires a limit). A call under a
   * budget (DATAAGENT_MAX_RUN_TOKENS, or a tenant's or person's) reserves this much output until
   * it settles, unless its client asked for fewer (`max_tokens`).
   */
  @Env('DATAAGENT_LLM_MAX_TOKENS', 'int') @IsInt() @Min(1)
  maxTokens = 4096;

  /**
   * Ask OpenAI-compatible servers for the tokens each streamed answer used
   * (`stream_options.include_usage`); off for an old server that refuses the field (usage is then estimated).
   */
  @Env('DATAAGENT_LLM_STREAM_USAGE', 'bool') @IsBoolean({ message: 'must be true or false' })
  streamUsage = true;
}

/** An agent worker: how many runs it holds, how it hands them over, and how far one run may go. */
export class WorkerConfig {
  /**
   * Runs one worker process holds at once (runs waiting for approval are parked and do not count; a
   * run whose MCP server waits for the person's answer to a question does). Gateways read it for
   * the default share of a tenant (DATAAGENT_MAX_CONCURRENT_RUNS_PER_TENANT): give them the same
   * value.
   */
  @Env('DATAAGENT_WORKER_CONCURRENCY', 'int') @IsInt() @Min(1) @Max(10_000)
  concurrency = 200;

  /**
   * The worker's name in `run_started` events and logs.
   * @defaultValue `<hostname>-<pid>`
   */
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

  /**
   * Seconds a stopping worker (SIGTERM) lets its runs finish before handing them back to the queue;
   * runs waiting for approval are handed back at once.
   * @defaultValue `20` (`npm start`: its grace period − 2 s)
   */
  @Env('DATAAGENT_DRAIN_SECONDS', 'number') @IsNumber() @Min(0)
  drainSeconds = 20;

  /**
   * The port of the worker's liveness and readiness probes (`/health/live`, `/health/ready`); 0
   * picks a free one (printed at startup). Unset: no probe server (several workers on one host need
   * no fixed port).
   */
  @Env('DATAAGENT_HEALTH_PORT', 'int') @IsOptional() @IsInt({ message: 'must be an integer port' }) @Min(0) @Max(65535)
  healthPort?: number;

  /**
   * Milliseconds between sweeps (one worker sweeps at a time) for runs still queued or running that
   * no job holds; such a run older than twice this is ended with `error{run_lost}` + `done`.
   */
  @Env('DATAAGENT_REAPER_INTERVAL_MS', 'int') @IsInt() @Min(100)
  reaperIntervalMs = 30_000;

  /** Tool calls per LLM turn. */
  @Env('DATAAGENT_MAX_TOOL_CALLS', 'int') @IsInt() @Min(1)
  maxToolCallsPerTurn = 3;

  /** LLM rounds per run. */
  @Env('DATAAGENT_MAX_ITERATIONS', 'int') @IsInt() @Min(1)
  maxIterations = 10;

  /**
   * Tokens (input and output together) one run's model calls may use in all; a run that reaches
   * it ends with `error{budget_exhausted}` and `done{reason: "budget"}`, its answer so far kept.
   * A request may ask for less (`max_tokens`), never more. 0: no limit.
   */
  @Env('DATAAGENT_MAX_RUN_TOKENS', 'int') @IsInt() @Min(0)
  maxRunTokens = 0;

  /**
   * UTF-8 bytes of earlier conversation sent with each turn: the newest messages are kept, a tool
   * call never without its result; an exchange too large for what is left is cut with a `[… cut:
   * …]` marker.
   */
  @Env('DATAAGENT_HISTORY_MAX_BYTES', 'int') @IsInt() @Min(1024)
  historyMaxBytes = 512 * 1024;

  /**
   * Seconds to wait for a person's approval; unanswered by then, the run ends `timeout`
   * (`done{reason: "timeout"}`) and a later decision gets 409 `timeout`.
   */
  @Env('DATAAGENT_HITL_TIMEOUT', 'number') @IsNumber({}, { message: 'must be a number of seconds' }) @Min(0.05)
  hitlTimeoutSeconds = 300;

  /**
   * Seconds a run waiting for a person's approval stays on its worker before it parks: gives its
   * worker slot back and continues on whichever worker takes it once the answer (or the
   * expiry) comes. 0 parks at once; a longer wait saves quick answers the continuation.
   */
  @Env('DATAAGENT_HITL_PARK_AFTER', 'number') @IsNumber({}, { message: 'must be a number of seconds' }) @Min(0)
  hitlParkAfterSeconds = 0;

  /**
   * Seconds an MCP server's question to a person (an elicitation) waits for the answer before it
   * counts as `cancel`. The run waits on its worker meanwhile (the server holds the call open),
   * and the call's own timeouts stand still.
   */
  @Env('DATAAGENT_ELICITATION_TIMEOUT', 'number') @IsNumber({}, { message: 'must be a number of seconds' }) @Min(0.05)
  elicitationTimeoutSeconds = 300;

  /** Run tool calls the model writes as `<tool_action>` tags in its text. */
  @Env('DATAAGENT_TOOL_ACTION_PARSING', 'bool') @IsBoolean({ message: 'must be true or false' })
  enableToolActionParsing = true;

  /** Run tool calls the model writes in its text as the JSON form `{"response", "tool_call": {"name", "arguments"}}`. */
  @Env('DATAAGENT_JSON_TOOL_CALLS', 'bool') @IsBoolean({ message: 'must be true or false' })
  enableJsonToolCalls = true;

  /** Describe the tools in the system prompt with the <tool_action> syntax (for models without native tool calls). */
  @Env('DATAAGENT_TOOL_PROMPT', 'bool') @IsBoolean({ message: 'must be true or false' })
  toolPrompt = false;

  /** Tool names that need approval; empty: each tool's own sensitivity; "none": nothing. */
  @Env('DATAAGENT_HITL_TOOLS', 'list') @IsString({ each: true })
  hitlTools: string[] = [];
}

/**
 * Tenants: with several, each has its own limits and feature switches (`tenants`, managed by
 * operators), and every per-user path must name the tenant.
 */
export class TenancyConfig {
  /**
   * Several tenants share this deployment: tenants' own settings apply (managed by operators), and
   * a workspace template without `{tenant_id}` stops the worker at startup. Off: one default
   * tenant, limits from the environment.
   */
  @Env('DATAAGENT_MULTI_TENANT', 'bool') @IsBoolean({ message: 'must be true or false' })
  multiTenant = false;

  /** Seconds a gateway or worker trusts what it read of a tenant's settings: a change applies everywhere within this. */
  @Env('DATAAGENT_TENANT_CACHE_SECONDS', 'number') @IsNumber() @Min(0) @Max(300)
  tenantCacheSeconds = 5;

  /**
   * Distinct users with live issued keys one tenant may have; a key for one more gets 429
   * `user_limit`. For tenants without their own `max_users`; 0: no limit.
   */
  @Env('DATAAGENT_MAX_USERS_PER_TENANT', 'int') @IsInt() @Min(0)
  maxUsersPerTenant = 0;
}

/**
 * Long-term memory and skills. Notes live in the database; `storageRoot` is only where earlier
 * versions kept them on disk (a worker moves them into the database when it starts).
 */
export class StorageConfig {
  /**
   * Where earlier versions kept long-term memory on disk; a worker moves those notes into the
   * database when it starts.
   * @defaultValue `/data` (`npm start`: `.data`)
   */
  @Env('DATAAGENT_STORAGE_ROOT') @IsString() @MinLength(1)
  storageRoot = '/data';

  /** Days a long-term memory note is kept; older notes are dropped. */
  @Env('DATAAGENT_MEMORY_RETENTION_DAYS', 'number') @IsNumber() @Min(0.0001)
  memoryRetentionDays = 90;

  /** Folder of skills: one subfolder per skill with `SKILL.md` (front matter `name`, `description`) and optional `scripts/`; missing: no skills. */
  @Env('DATAAGENT_SKILLS_DIR') @IsString() @MinLength(1)
  skillsDir = 'skills';
}

/** Secrets at rest (users' MCP server env and header values): read by the gateway and the workers alike. */
export class SecretsConfig {
  /**
   * 32 bytes as 64 hex characters or base64 (`openssl rand -hex 32`), the same on every gateway and
   * worker: users' MCP env and header values, and their MCP sign-ins' tokens, are stored encrypted
   * with it (AES-256-GCM). Unset: servers with such values are refused (422 `secret_key_required`).
   * @defaultValue none (`npm start`: generated once into `.data/secret.key`)
   */
  @Env('DATAAGENT_SECRET_KEY') @IsOptional() @IsSecretKey()
  secretKey?: string;
}

/** Prometheus metrics: `/metrics` on each gateway, a small port of its own on each worker. */
export class MetricsConfig {
  /**
   * Serve Prometheus metrics: `/metrics` on gateways, DATAAGENT_METRICS_PORT on workers; also the
   * gateways' `/metrics/queue`, which KEDA scales the workers on. Off: no metrics route on the
   * gateway and no metrics port on the workers.
   */
  @Env('DATAAGENT_METRICS_ENABLED', 'bool') @IsBoolean({ message: 'must be true or false' })
  enabled = true;

  /**
   * When set (16 characters or more), a scrape needs `Authorization: Bearer <token>` (gateway and
   * workers alike). Unset: anyone who reaches the port may read the metrics.
   */
  @Env('DATAAGENT_METRICS_TOKEN') @IsOptional() @IsString() @MinLength(16, { message: 'must be at least 16 characters' })
  token?: string;

  /** Workers: the port of their metrics server; 0 picks a free one (its address is printed at startup). */
  @Env('DATAAGENT_METRICS_PORT', 'int') @IsInt({ message: 'must be an integer port' }) @Min(0) @Max(65535)
  port = 9464;

  /**
   * Workers: the address their metrics server binds (all interfaces, so Prometheus can reach the
   * pod).
   * @defaultValue `0.0.0.0` (`npm start`: `127.0.0.1`)
   */
  @Env('DATAAGENT_METRICS_HOST') @IsString() @MinLength(1)
  host = '0.0.0.0';

  /**
   * Label the model token and cost counters with the tenant as well as the model: a time series
   * per tenant and model, so turn it on only where tenants are few.
   */
  @Env('DATAAGENT_METRICS_TENANT_LABEL', 'bool') @IsBoolean({ message: 'must be true or false' })
  tenantLabel = false;
}
