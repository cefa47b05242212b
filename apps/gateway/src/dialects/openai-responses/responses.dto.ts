import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsInt, IsNumber, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** `POST /v1/responses`: what DataAgent takes of OpenAI's request (other fields are ignored). */
export class CreateResponseDto {
  @ApiProperty({ description: 'An assistant id (GET /v1/models)', example: 'default' })
  @IsString() @MaxLength(64)
  model: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true } }],
    description: 'A user message, or input items: messages (input_text), function_call_output (results of your function tools), mcp_approval_response (an answer to an approval request)',
    example: 'Hello',
  })
  @IsDefined()
  input: unknown;

  @ApiPropertyOptional({ description: 'Answer as Responses server-sent events, each with a sequence_number' })
  @IsOptional() @IsBoolean()
  stream?: boolean;

  @ApiPropertyOptional({ description: 'Answer at once (status queued or in_progress); GET /v1/responses/{id} follows the run' })
  @IsOptional() @IsBoolean()
  background?: boolean;

  @ApiPropertyOptional({ description: "Continue that response's conversation (its session); answers its approval requests or function calls" })
  @IsOptional() @IsString() @MaxLength(128)
  previous_response_id?: string;

  @ApiPropertyOptional({ description: 'A system message before the input, for a new conversation only' })
  @IsOptional() @IsString() @MaxLength(100_000)
  instructions?: string;

  @ApiPropertyOptional({ description: 'false: the conversation is kept only a while (DATAAGENT_OPENAI_SESSION_TTL) unless continued; true (the default): it is kept as a session' })
  @IsOptional() @IsBoolean()
  store?: boolean;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: "Function tools you run yourself ({type: 'function', name, description, parameters}), offered beside the assistant's own; a call comes back as a function_call item",
  })
  @IsOptional() @IsArray() @ArrayMaxSize(128)
  tools?: unknown[];

  @ApiPropertyOptional({ type: 'string', enum: ['auto'], description: '`auto` (the default) only' })
  @IsOptional()
  tool_choice?: unknown;

  @ApiPropertyOptional({ minimum: 0, maximum: 2 })
  @IsOptional() @IsNumber() @Min(0) @Max(2)
  temperature?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Most tokens of each model answer of the run' })
  @IsOptional() @IsInt() @Min(1)
  max_output_tokens?: number;
}

/** An output item: a `message`, a `function_call` (for you to run), an `mcp_call` (a tool the assistant ran) or an `mcp_approval_request`. */
class ResponseOutputItem {
  @ApiProperty({ enum: ['message', 'function_call', 'mcp_call', 'mcp_approval_request'] })
  type: string;

  @ApiProperty()
  id: string;

  @ApiPropertyOptional({ description: 'message, function_call, mcp_call' })
  status?: string;

  @ApiPropertyOptional({ description: 'message: its text parts', type: 'array', items: { type: 'object', properties: { type: { type: 'string', enum: ['output_text'] }, text: { type: 'string' } } } })
  content?: Array<{ type: string; text: string }>;

  @ApiPropertyOptional({ description: 'function_call: the id to answer with a function_call_output' })
  call_id?: string;

  @ApiPropertyOptional({ description: 'function_call, mcp_call, mcp_approval_request: the tool' })
  name?: string;

  @ApiPropertyOptional({ description: 'The arguments, as JSON text' })
  arguments?: string;

  @ApiPropertyOptional({ description: "mcp_call, mcp_approval_request: the MCP server, or 'dataagent' for the assistant's own tools" })
  server_label?: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: "mcp_call: the tool's output" })
  output?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'mcp_call: why it failed' })
  error?: string | null;
}

class ResponseError {
  @ApiProperty()
  code: string;

  @ApiProperty()
  message: string;
}

class ResponseIncompleteDetails {
  @ApiProperty({ description: 'cancelled, max_iterations or tool_call_limit' })
  reason: string;
}

class ResponseUsageDto {
  @ApiProperty({ type: 'integer' })
  input_tokens: number;

  @ApiProperty({ type: 'integer' })
  output_tokens: number;

  @ApiProperty({ type: 'integer' })
  total_tokens: number;

  @ApiPropertyOptional({ description: "DataAgent's own: what the run's model calls cost, exact, as a decimal string", example: '0.002200000000' })
  cost?: string;

  @ApiPropertyOptional({ description: "DataAgent's own: the currency of `cost`", example: 'USD' })
  currency?: string;
}

/** A response, as OpenAI's Responses API shows one: a window of one run's event log. */
export class ResponseObjectDto {
  @ApiProperty({ description: 'resp_<run id>, or resp_<run id>_<seq> for the part of a run after an approval', example: 'resp_0b5e7d52-6f0e-4d5c-9b0a-2f4b8b3c1a11' })
  id: string;

  @ApiProperty({ enum: ['response'] })
  object: 'response';

  @ApiProperty({ type: 'integer', description: 'Unix seconds' })
  created_at: number;

  @ApiProperty({ enum: ['queued', 'in_progress', 'completed', 'incomplete', 'failed', 'cancelled'] })
  status: string;

  @ApiProperty({ type: Boolean, nullable: true })
  background: boolean | null;

  @ApiProperty({ type: ResponseError, nullable: true })
  error: ResponseError | null;

  @ApiProperty({ type: ResponseIncompleteDetails, nullable: true })
  incomplete_details: ResponseIncompleteDetails | null;

  @ApiProperty({ description: 'The assistant id' })
  model: string;

  @ApiProperty({ type: [ResponseOutputItem] })
  output: ResponseOutputItem[];

  @ApiProperty({ description: "The text of the output's messages, joined" })
  output_text: string;

  @ApiProperty({ type: ResponseUsageDto, nullable: true, description: "The run's usage, once it is done" })
  usage: ResponseUsageDto | null;
}
