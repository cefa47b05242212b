import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateNested } from 'class-validator';
import { ELICITATION_ACTIONS, MAX_SEQ, type ElicitationAction } from '#core/events/execution-event.js';

/** Limits a client sets on one run: it may lower the deployment's, never raise them. */
export class RunLimitsDto {
  @ApiPropertyOptional({ description: 'Tokens (input and output) all of the run’s model calls may use; the lower of this and DATAAGENT_MAX_RUN_TOKENS holds', minimum: 1 })
  @IsOptional() @IsInt({ message: 'limits.max_tokens must be a whole number of tokens' }) @Min(1) @Max(1_000_000_000)
  max_tokens?: number;
}

/** A chat turn, the same over REST, Socket.IO and WebSocket. */
export class ChatRequestDto {
  @ApiProperty({ description: "The person's message", minLength: 1 })
  @IsString() @MinLength(1, { message: 'message must not be empty' })
  message: string;

  @ApiPropertyOptional({ description: 'The session to continue; a new one is created when absent', pattern: '^[A-Za-z0-9_-]{1,64}$' })
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'session_id must be 1-64 letters, digits, _ or -' })
  session_id?: string;

  @ApiPropertyOptional({ description: 'The assistant of a new session (GET /api/v1/agents)', maxLength: 64 })
  @IsOptional() @IsString() @MaxLength(64)
  assistant_id?: string;

  @ApiPropertyOptional({ type: RunLimitsDto, description: 'Limits on this run, lower than the deployment’s' })
  @IsOptional() @ValidateNested() @Type(() => RunLimitsDto)
  limits?: RunLimitsDto;
}

/** The envelope of every socket message: {type, payload}. */
export class SocketMessageDto {
  @IsString()
  type: string;

  @IsOptional()
  payload?: unknown;
}

export class CancelRequestDto {
  @IsString() @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'session_id must be 1-64 letters, digits, _ or -' })
  session_id: string;
}

export class HitlDecisionMessageDto {
  @IsString() @MinLength(1)
  request_id: string;

  @IsIn(['approve', 'reject', 'approve_all'], { message: 'decision must be approve, reject or approve_all' })
  decision: 'approve' | 'reject' | 'approve_all';

  @IsOptional() @IsString() @MaxLength(2000)
  message?: string;
}

/** The answer to an elicitation_request over a socket (REST: POST /elicitations/{request_id}). */
export class ElicitationAnswerMessageDto {
  @IsString() @MinLength(1)
  request_id: string;

  @IsIn(ELICITATION_ACTIONS, { message: 'action must be accept, decline or cancel' })
  action: ElicitationAction;

  @IsOptional() @IsObject({ message: 'content must be an object of the form’s fields' })
  content?: Record<string, unknown>;
}

export class ResumeRequestDto {
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_-]{1,64}$/)
  session_id?: string;

  @IsOptional() @IsString() @MaxLength(64)
  run_id?: string;

  @IsInt({ message: 'after_seq must be an integer' }) @Min(0) @Max(MAX_SEQ)
  after_seq: number;
}
