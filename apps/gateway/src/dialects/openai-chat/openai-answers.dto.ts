import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/*
 * The answers of the OpenAI-compatible routes, in OpenAI's shapes (the fields DataAgent sends),
 * so an OpenAI client's own types apply.
 */

/** An assistant, as a model. */
export class OpenAiModel {
  @ApiProperty({ description: 'The assistant id, to send as `model`', example: 'default' })
  id: string;

  @ApiProperty({ enum: ['model'] })
  object: 'model';

  @ApiProperty({ type: 'integer', enum: [0] })
  created: 0;

  @ApiProperty({ enum: ['dataagent'] })
  owned_by: 'dataagent';
}

export class OpenAiModelList {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: [OpenAiModel] })
  data: OpenAiModel[];
}

class ClientToolCallFunction {
  @ApiProperty({ description: "The name of one of the request's `tools`" })
  name: string;

  @ApiProperty({ description: 'The arguments, as JSON text' })
  arguments: string;
}

/** A call to one of the request's own `tools`: the client runs it and sends the result as a role `tool` message. */
export class ClientToolCall {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: ['function'] })
  type: 'function';

  @ApiProperty({ type: ClientToolCallFunction })
  function: ClientToolCallFunction;
}

/** What the run's model calls used, summed (README: usage). */
export class CompletionUsage {
  @ApiProperty({ type: 'integer' })
  prompt_tokens: number;

  @ApiProperty({ type: 'integer' })
  completion_tokens: number;

  @ApiProperty({ type: 'integer' })
  total_tokens: number;

  @ApiPropertyOptional({ type: () => PromptTokensDetails, description: 'Of the prompt, the tokens the provider read from its cache' })
  prompt_tokens_details?: PromptTokensDetails;

  @ApiPropertyOptional({ description: "DataAgent's own: what the run's model calls cost, exact, as a decimal string", example: '0.002200000000' })
  cost?: string;

  @ApiPropertyOptional({ description: "DataAgent's own: the currency of `cost`", example: 'USD' })
  currency?: string;
}

export class PromptTokensDetails {
  @ApiProperty({ type: 'integer' })
  cached_tokens: number;
}

class ChatCompletionMessage {
  @ApiProperty({ enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ type: String, nullable: true, description: "The model's text, with a line for each tool the run used; null when it only called the client's tools" })
  content: string | null;

  @ApiPropertyOptional({ type: [ClientToolCall], description: "With finish_reason tool_calls: the calls to the request's own tools" })
  tool_calls?: ClientToolCall[];
}

class ChatCompletionChoice {
  @ApiProperty({ type: 'integer', enum: [0] })
  index: 0;

  @ApiProperty({ type: ChatCompletionMessage })
  message: ChatCompletionMessage;

  @ApiProperty({ enum: ['stop', 'tool_calls', 'length'], description: "tool_calls: the run stopped at calls to the request's own tools; length: a budget was spent (budget_exhausted)" })
  finish_reason: 'stop' | 'tool_calls' | 'length';

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'Always null' })
  logprobs: null;
}

/** The whole answer of a run. */
export class ChatCompletion {
  @ApiProperty({ description: '`chatcmpl-<run_id>`' })
  id: string;

  @ApiProperty({ enum: ['chat.completion'] })
  object: 'chat.completion';

  @ApiProperty({ type: 'integer', description: 'Unix seconds' })
  created: number;

  @ApiProperty({ description: 'The assistant asked for' })
  model: string;

  @ApiProperty({ type: [ChatCompletionChoice] })
  choices: ChatCompletionChoice[];

  @ApiPropertyOptional({ type: CompletionUsage })
  usage?: CompletionUsage;
}

class ChatCompletionDelta {
  @ApiPropertyOptional({ enum: ['assistant'], description: 'In the first chunk' })
  role?: 'assistant';

  @ApiPropertyOptional()
  content?: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: "A call to one of the request's own tools, as OpenAI streams one: `{index, id, type, function: {name, arguments: ''}}`, then `{index, function: {arguments}}`",
  })
  tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }>;
}

class ChatCompletionChunkChoice {
  @ApiProperty({ type: 'integer', enum: [0] })
  index: 0;

  @ApiProperty({ type: ChatCompletionDelta })
  delta: ChatCompletionDelta;

  @ApiProperty({ type: String, enum: ['stop', 'tool_calls', 'length'], nullable: true, description: 'stop, tool_calls or length (a budget was spent) in the last chunk with a choice' })
  finish_reason: 'stop' | 'tool_calls' | 'length' | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'Always null' })
  logprobs: null;
}

/** A piece of a streamed answer: the `data` of each server-sent event, until `data: [DONE]`. */
export class ChatCompletionChunk {
  @ApiProperty({ description: '`chatcmpl-<run_id>`' })
  id: string;

  @ApiProperty({ enum: ['chat.completion.chunk'] })
  object: 'chat.completion.chunk';

  @ApiProperty({ type: 'integer', description: 'Unix seconds' })
  created: number;

  @ApiProperty()
  model: string;

  @ApiProperty({ type: [ChatCompletionChunkChoice], description: 'Empty in the usage chunk' })
  choices: ChatCompletionChunkChoice[];

  @ApiPropertyOptional({ type: CompletionUsage, description: 'With stream_options.include_usage: in a last chunk, whose choices are empty' })
  usage?: CompletionUsage;
}
