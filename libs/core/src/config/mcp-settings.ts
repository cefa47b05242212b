import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { Env } from './env.js';

/** Worker: the operator's MCP servers and the connection pools (users' limits: McpConfig in mcp/user-server-config.ts). */
export class McpRuntimeConfig {
  /** The operator's global servers: a JSON file, `{"servers": [...]}` or `{"mcpServers": {...}}`. */
  @Env('DATAAGENT_MCP_CONFIG') @IsOptional() @IsString()
  configFile?: string;

  /** Connections one worker holds in all; at the cap the least recently used idle one closes. */
  @Env('DATAAGENT_MCP_MAX_CONNECTIONS', 'int') @IsInt() @Min(1) @Max(100_000)
  maxConnections = 1_000;

  /** Seconds a connection, its handshake and its `tools/list` may take. */
  @Env('DATAAGENT_MCP_CONNECT_TIMEOUT', 'int') @IsInt() @Min(1) @Max(600)
  connectTimeoutSeconds = 30;

  /** Seconds an unused connection stays open. */
  @Env('DATAAGENT_MCP_IDLE_SECONDS', 'int') @IsInt() @Min(1)
  idleSeconds = 300;

  /** Milliseconds a tool call may take when its server sets no timeout_ms (progress extends it, up to ten times). */
  @Env('DATAAGENT_MCP_CALL_TIMEOUT_MS', 'int') @IsInt() @Min(100) @Max(600_000)
  callTimeoutMs = 60_000;

  /**
   * `intent`: an MCP tool goes into the prompt only when the person's message points at it
   * (explicit call or trigger keyword), described in layers; `all`: every tool's full schema, every turn.
   */
  @Env('DATAAGENT_MCP_TOOL_INJECTION') @IsIn(['intent', 'all'], { message: 'must be intent or all' })
  toolInjection: 'intent' | 'all' = 'intent';

  /** Layer 2: ask the model which MCP servers a message needs when the rules leave it unsure (one extra short model call for such messages). */
  @Env('DATAAGENT_MCP_INTENT_CLASSIFIER', 'bool') @IsBoolean({ message: 'must be true or false' })
  intentClassifier = false;

  /** Keep MCP calls' arguments and results in the audit log, not only their sizes and hashes. */
  @Env('DATAAGENT_AUDIT_PAYLOADS', 'bool') @IsBoolean({ message: 'must be true or false' })
  auditPayloads = false;

  /**
   * Bytes one message from an MCP server may have (a stdio line, an HTTP body, an SSE event). It
   * is counted while it is read, and a larger one is dropped unparsed: its call fails, saying so.
   * JSON nested more than 100 levels deep is refused the same way.
   */
  @Env('DATAAGENT_MCP_MAX_MESSAGE_BYTES', 'int') @IsInt() @Min(1024) @Max(1024 * 1024 * 1024)
  maxMessageBytes = 4 * 1024 * 1024;

  /** Seconds between health pings of a connected server. */
  @Env('DATAAGENT_MCP_PING_INTERVAL', 'int') @IsInt() @Min(1)
  pingIntervalSeconds = 30;
}
