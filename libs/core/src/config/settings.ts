import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min, MinLength } from 'class-validator';
import { Env } from './env.js';

/** Gateway: HTTP, sockets, auth, admission. */
export class ServerConfig {
  @Env('DATAAGENT_HOST') @IsString() @MinLength(1)
  host = '0.0.0.0';

  @Env('DATAAGENT_PORT', 'int') @IsInt({ message: 'must be an integer port' }) @Min(0) @Max(65535)
  port = 8000;

  @Env('DATAAGENT_WORKERS', 'int') @IsInt() @Min(1) @Max(64)
  workers = 1;

  @Env('DATAAGENT_API_KEYS', 'list') @IsString({ each: true })
  apiKeys: string[] = [];

  @Env('DATAAGENT_AUTH_DISABLED', 'bool') @IsBoolean({ message: 'must be true or false' })
  authDisabled = false;

  @Env('DATAAGENT_CORS_ORIGINS', 'list') @IsString({ each: true })
  corsOrigins: string[] = ['*'];

  @Env('DATAAGENT_SESSION_TIMEOUT', 'int') @IsInt() @Min(1)
  sessionTimeoutSeconds = 3600;

  @Env('DATAAGENT_SESSION_STORE') @IsIn(['mysql', 'memory'])
  sessionStore: 'mysql' | 'memory' = 'mysql';

  @Env('DATAAGENT_MAX_MESSAGE_BYTES', 'int') @IsInt() @Min(1)
  maxMessageBytes = 64 * 1024;

  /** Queued + running runs above which new chats get 503 with Retry-After. */
  @Env('DATAAGENT_MAX_PENDING_RUNS', 'int') @IsInt() @Min(1)
  maxPendingRuns = 10_000;

  /** How long POST /chat waits for its run before answering 504. */
  @Env('DATAAGENT_SYNC_TIMEOUT_MS', 'int') @IsInt() @Min(100)
  syncTimeoutMs = 120_000;

  @Env('DATAAGENT_LOG_LEVEL') @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  logLevel = 'info';
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

export class LlmConfig {
  @Env('OPENAI_API_KEY') @IsOptional() @IsString()
  openaiApiKey?: string;

  @Env('OPENAI_BASE_URL') @IsOptional() @IsUrl({ require_tld: false, require_protocol: true }, { message: 'must be an http(s) URL' })
  openaiBaseUrl?: string;

  @Env('DATAAGENT_MODEL') @IsString() @MinLength(1)
  model = 'gpt-4o-mini';

  /** `offline` forces the built-in offline model; `openai` requires a key or base URL. */
  @Env('DATAAGENT_LLM_PROVIDER') @IsIn(['auto', 'openai', 'offline'])
  provider: 'auto' | 'openai' | 'offline' = 'auto';

  @Env('DATAAGENT_LLM_TIMEOUT_MS', 'int') @IsInt() @Min(100)
  timeoutMs = 120_000;
}

export class WorkerConfig {
  @Env('DATAAGENT_WORKER_CONCURRENCY', 'int') @IsInt() @Min(1) @Max(10_000)
  concurrency = 50;

  @Env('DATAAGENT_WORKER_ID') @IsOptional() @IsString()
  workerId?: string;

  @Env('DATAAGENT_MAX_TOOL_CALLS', 'int') @IsInt() @Min(1)
  maxToolCallsPerTurn = 3;

  @Env('DATAAGENT_MAX_ITERATIONS', 'int') @IsInt() @Min(1)
  maxIterations = 10;

  @Env('DATAAGENT_LOG_LEVEL') @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  logLevel = 'info';
}
