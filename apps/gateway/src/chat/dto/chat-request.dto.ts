import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';

/** A chat turn, the same over REST, Socket.IO and WebSocket. */
export class ChatRequestDto {
  @IsString() @MinLength(1, { message: 'message must not be empty' })
  message: string;

  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'session_id must be 1-64 letters, digits, _ or -' })
  session_id?: string;

  @IsOptional() @IsString() @MaxLength(64)
  assistant_id?: string;
}

/** The envelope of every socket message: {type, payload}. */
export class SocketMessageDto {
  @IsString()
  type: string;

  @IsOptional()
  payload?: unknown;
}
