import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ChatRole } from '#core/llm/chat-model.js';

/** A message of a session's history as the API shows it. */
export class MessageView {
  @ApiProperty()
  message_id: string;

  @ApiProperty()
  session_id: string;

  @ApiProperty({ type: String, nullable: true, description: 'The run that wrote it; null for history a client brought (OpenAI-compatible API)' })
  run_id: string | null;

  @ApiProperty({ enum: ['system', 'user', 'assistant', 'tool'] })
  role: ChatRole;

  @ApiProperty()
  content: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The tool name (role tool) or the native tool calls (role assistant), when any' })
  metadata?: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** A page of a session's messages, oldest first. */
export class MessageList {
  @ApiProperty()
  session_id: string;

  @ApiProperty({ type: 'integer', description: 'Messages in the session' })
  total: number;

  @ApiProperty({ type: 'integer' })
  limit: number;

  @ApiProperty({ type: 'integer' })
  offset: number;

  @ApiProperty({ type: [MessageView] })
  messages: MessageView[];
}
