import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { TOOL_CALL_STATUSES, type ToolCallRecord, type ToolCallStatus } from '#core/mcp/tool-call-audit.js';
import { ANY_JSON } from '../common/json-schemas.js';

/** A tool binding: the assistant or API key it binds (one of the two), and the tools it may use. */
export class ToolBindingView {
  @ApiProperty()
  binding_id: string;

  @ApiPropertyOptional()
  agent_id?: string;

  @ApiPropertyOptional({ description: 'The key_id of the API key bound' })
  api_key_id?: string;

  @ApiProperty({ type: [String], example: ['github.create_issue', 'jira.*'] })
  tools: string[];

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

export class ToolBindingList {
  @ApiProperty({ type: [ToolBindingView] })
  bindings: ToolBindingView[];
}

export class ToolBindingDeleted {
  @ApiProperty()
  binding_id: string;

  @ApiProperty({ enum: [true] })
  deleted: true;
}

/** One MCP tool call of the audit. */
export class ToolCallView {
  @ApiProperty()
  call_id: string;

  @ApiProperty({ description: 'W3C trace id (32 hex) of the run' })
  trace_id: string;

  @ApiProperty()
  user_id: string;

  @ApiProperty()
  session_id: string;

  @ApiProperty()
  run_id: string;

  @ApiProperty({ description: 'The assistant' })
  agent_id: string;

  @ApiPropertyOptional()
  api_key_id?: string;

  @ApiProperty({ description: 'The MCP server' })
  server_id: string;

  @ApiProperty({ description: '`server.tool`' })
  tool_name: string;

  @ApiProperty()
  tool_call_id: string;

  @ApiProperty({ description: "The tool's schema version in the catalog; empty for a tool the run did not have" })
  schema_version: string;

  @ApiProperty({ enum: ['ok', 'invalid_input', 'invalid_output', 'not_checked'] })
  validation: ToolCallRecord['validation'];

  @ApiProperty({ enum: TOOL_CALL_STATUSES })
  status: ToolCallStatus;

  @ApiPropertyOptional({ description: 'The reason in the model\'s words, for anything but `ok`' })
  error?: string;

  @ApiProperty({ format: 'date-time' })
  started_at: string;

  @ApiProperty({ format: 'date-time' })
  ended_at: string;

  @ApiProperty({ type: 'integer' })
  duration_ms: number;

  @ApiProperty({ type: 'integer' })
  args_bytes: number;

  @ApiProperty()
  args_sha256: string;

  @ApiProperty({ type: 'integer' })
  result_bytes: number;

  @ApiProperty()
  result_sha256: string;

  @ApiPropertyOptional({ ...ANY_JSON, description: 'Only with DATAAGENT_AUDIT_PAYLOADS=true' })
  args?: unknown;

  @ApiPropertyOptional({ ...ANY_JSON, description: 'Only with DATAAGENT_AUDIT_PAYLOADS=true' })
  result?: unknown;
}

export class ToolCallList {
  @ApiProperty({ type: [ToolCallView] })
  tool_calls: ToolCallView[];

  @ApiProperty({ type: 'integer' })
  limit: number;

  @ApiProperty({ type: 'integer' })
  offset: number;
}
