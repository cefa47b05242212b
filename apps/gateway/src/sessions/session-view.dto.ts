import { ApiProperty } from '@nestjs/swagger';

/** A session as the API shows it. */
export class SessionView {
  @ApiProperty()
  session_id: string;

  @ApiProperty({ description: 'GET /api/v1/agents lists them' })
  assistant_id: string;

  @ApiProperty({ description: 'Empty until set (PATCH) or the first turn names it' })
  title: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;

  @ApiProperty({ format: 'date-time' })
  last_active_at: string;
}

/** One session with the number of messages in its history. */
export class SessionDetail extends SessionView {
  @ApiProperty({ type: 'integer' })
  message_count: number;
}

/** A page of the caller's sessions, most recently active first. */
export class SessionList {
  @ApiProperty({ type: [SessionView] })
  sessions: SessionView[];

  @ApiProperty({ type: 'integer' })
  limit: number;

  @ApiProperty({ type: 'integer' })
  offset: number;
}

export class SessionDeleted {
  @ApiProperty()
  session_id: string;

  @ApiProperty({ enum: [true] })
  deleted: true;
}
