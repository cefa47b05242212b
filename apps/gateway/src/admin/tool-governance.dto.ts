import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { TOOL_PATTERN } from '#core/mcp/tool-bindings.js';
import { TOOL_CALL_STATUSES, type ToolCallStatus } from '#core/mcp/tool-call-audit.js';

/** `{agent_id | api_key_id, tools: ["server.tool" | "server.*" | "*", ...]}`. */
export class CreateToolBindingDto {
  @ApiPropertyOptional({ description: 'The assistant bound (or api_key_id)' })
  @IsOptional() @IsString() @Matches(/^\S{1,128}$/, { message: 'agent_id must be 1-128 characters without white space' })
  agent_id?: string;

  @ApiPropertyOptional({ description: 'The API key bound (its key_id; or agent_id)' })
  @IsOptional() @IsString() @Matches(/^\S{1,128}$/, { message: 'api_key_id must be 1-128 characters without white space' })
  api_key_id?: string;

  @ApiProperty({ type: [String], example: ['github.create_issue', 'jira.*'], description: '"server.tool", "server.*" or "*"' })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(500)
  @IsString({ each: true }) @Matches(TOOL_PATTERN, { each: true, message: 'each of tools must be "server.tool", "server.*" or "*"' })
  tools: string[];
}

export class ToolCallQueryDto {
  @ApiPropertyOptional({ maxLength: 64 })
  @IsOptional() @IsString() @MaxLength(64)
  session_id?: string;

  @ApiPropertyOptional({ maxLength: 200, description: 'server.tool' })
  @IsOptional() @IsString() @MaxLength(200)
  tool_name?: string;

  @ApiPropertyOptional({ enum: TOOL_CALL_STATUSES })
  @IsOptional() @IsIn(TOOL_CALL_STATUSES as string[], { message: `status must be one of ${TOOL_CALL_STATUSES.join(', ')}` })
  status?: ToolCallStatus;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 50 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit = 50;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, default: 0 })
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1_000_000_000)
  offset = 0;
}
