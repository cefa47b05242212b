import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import type { McpTransport } from '#core/mcp/mcp-config.js';
import { MCP_SERVER_STATES, type McpServerState } from '#transport/mcp-status.js';

/** A status as the workers last reported it; `unknown` until one has. */
const STATUSES = [...MCP_SERVER_STATES, 'unknown'] as const;

const SECRET_MAP = { type: 'object', additionalProperties: { type: 'string' }, description: 'Secret values, shown as "***"' } as const;

class McpToolSettingsView {
  @ApiPropertyOptional({ type: 'integer' })
  timeout_ms?: number;

  @ApiPropertyOptional({ description: 'Safe to call again with the same arguments' })
  idempotent?: boolean;

  @ApiPropertyOptional({ description: 'Ask the person before each call' })
  approval?: boolean;
}

/** A user's MCP server as the API shows it: its config with secret values masked, and its status. */
export class McpServerView {
  @ApiProperty({ description: 'Its tools are named `name.tool`' })
  name: string;

  @ApiProperty({ enum: ['stdio', 'sse', 'streamable-http'] })
  transport: McpTransport;

  @ApiPropertyOptional()
  command?: string;

  @ApiPropertyOptional({ type: [String] })
  args?: string[];

  @ApiPropertyOptional(SECRET_MAP)
  env?: Record<string, string>;

  @ApiPropertyOptional()
  cwd?: string;

  @ApiPropertyOptional()
  url?: string;

  @ApiPropertyOptional(SECRET_MAP)
  headers?: Record<string, string>;

  @ApiPropertyOptional({ type: 'integer' })
  timeout_ms?: number;

  @ApiProperty()
  disabled: boolean;

  @ApiPropertyOptional()
  description?: string;

  @ApiPropertyOptional({ type: [String] })
  trigger_keywords?: string[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: { $ref: getSchemaPath(McpToolSettingsView) }, description: "Settings of single tools, by the tool's name on the server" })
  tools?: Record<string, McpToolSettingsView>;

  @ApiProperty({ enum: STATUSES })
  status: McpServerState | 'unknown';

  @ApiProperty({ type: String, nullable: true })
  last_error: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  tool_count: number | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_check: string | null;

  @ApiPropertyOptional({ description: 'A server reached by URL: whether the person has signed in to it (OAuth)' })
  signed_in?: boolean;

  @ApiPropertyOptional({ description: "With `status: needs_authorization`: opens the sign-in in the person's browser as it is (a single-use ticket, a few minutes)" })
  authorize_url?: string;

  @ApiPropertyOptional({ type: [String], description: 'Secret fields that could not be opened (the deployment changed its DATAAGENT_SECRET_KEY): set them again' })
  unreadable_secrets?: string[];

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

/** An operator's server the user gets, known to the gateway only by the status workers report. */
export class GlobalMcpServerView {
  @ApiProperty()
  name: string;

  @ApiProperty({ enum: ['global'] })
  scope: 'global';

  @ApiProperty({ enum: MCP_SERVER_STATES })
  status: McpServerState;

  @ApiProperty({ type: String, nullable: true })
  last_error: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  tool_count: number | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_check: string | null;
}

export class McpServerList {
  @ApiProperty({ type: [McpServerView] })
  servers: McpServerView[];

  @ApiProperty({ type: [GlobalMcpServerView], description: "The operator's servers the user gets (one of the user's by the same name overrides it)" })
  global_servers: GlobalMcpServerView[];

  @ApiProperty({ type: 'integer', description: 'The most servers the user may keep' })
  max_servers: number;
}

export class McpServerDeleted {
  @ApiProperty()
  name: string;

  @ApiProperty({ enum: [true] })
  deleted: true;
}

/** A server of a pasted config that was not added: the error a single POST of it would have had. */
export class McpPasteRefusal {
  @ApiProperty()
  name: string;

  @ApiProperty({ example: 'mcp_server_not_allowed' })
  error_code: string;

  @ApiProperty()
  message: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  details?: Record<string, unknown>;
}

/** What a pasted Claude Desktop / Cursor config registered, and what it did not. */
export class McpPasteAnswer {
  @ApiProperty({ example: '1 of 2 MCP servers added; refused: shell (mcp_server_not_allowed)' })
  message: string;

  @ApiProperty({ type: [McpServerView] })
  added: McpServerView[];

  @ApiProperty({ type: [McpPasteRefusal] })
  refused: McpPasteRefusal[];
}

class McpToolAnnotationsView {
  @ApiPropertyOptional()
  title?: string;

  @ApiPropertyOptional()
  readOnlyHint?: boolean;

  @ApiPropertyOptional()
  destructiveHint?: boolean;

  @ApiPropertyOptional()
  idempotentHint?: boolean;

  @ApiPropertyOptional()
  openWorldHint?: boolean;
}

class McpCatalogToolView {
  @ApiProperty({ description: '`server.tool`' })
  name: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of its arguments' })
  input_schema: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  output_schema?: Record<string, unknown>;

  @ApiPropertyOptional({ type: McpToolAnnotationsView })
  annotations?: McpToolAnnotationsView;

  @ApiProperty({ description: 'A hash of its schemas: it changes when they do' })
  schema_version: string;
}

/** A server's tools as a worker last listed them. */
export class McpCatalogView {
  @ApiProperty()
  server_name: string;

  @ApiProperty({ enum: ['user', 'global'] })
  scope: 'user' | 'global';

  @ApiProperty({ type: String, nullable: true, description: 'null until a worker has listed the tools' })
  version: string | null;

  @ApiProperty({ description: 'The listing was cut (too many tools, or an error midway)' })
  partial: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  updated_at: string | null;

  @ApiProperty({ type: [McpCatalogToolView] })
  tools: McpCatalogToolView[];
}

/** Registered for the OpenAPI document: {@link McpServerView.tools} refers to it by name. */
export const MCP_EXTRA_VIEWS = [McpToolSettingsView];
