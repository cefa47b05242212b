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

class ChatCompletionMessage {
  @ApiProperty({ enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ description: "The model's text, with a line for each tool the run used" })
  content: string;
}

class ChatCompletionChoice {
  @ApiProperty({ type: 'integer', enum: [0] })
  index: 0;

  @ApiProperty({ type: ChatCompletionMessage })
  message: ChatCompletionMessage;

  @ApiProperty({ enum: ['stop'] })
  finish_reason: 'stop';

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
}

class ChatCompletionDelta {
  @ApiPropertyOptional({ enum: ['assistant'], description: 'In the first chunk' })
  role?: 'assistant';

  @ApiPropertyOptional()
  content?: string;
}

class ChatCompletionChunkChoice {
  @ApiProperty({ type: 'integer', enum: [0] })
  index: 0;

  @ApiProperty({ type: ChatCompletionDelta })
  delta: ChatCompletionDelta;

  @ApiProperty({ type: String, enum: ['stop'], nullable: true, description: 'stop in the last chunk' })
  finish_reason: 'stop' | null;

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

  @ApiProperty({ type: [ChatCompletionChunkChoice] })
  choices: ChatCompletionChunkChoice[];
}
