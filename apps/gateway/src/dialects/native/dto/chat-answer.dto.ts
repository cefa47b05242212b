import { ApiProperty } from '@nestjs/swagger';
import type { EventDict } from '#core/events/execution-event.js';
import { RUN_EVENT } from './run-event.dto.js';

/** The answer of `POST /api/v1/chat`: the run's events once it is done. */
export class ChatAnswer {
  @ApiProperty({ description: 'The session the turn was in (a new one unless the request named one)' })
  session_id: string;

  @ApiProperty()
  run_id: string;

  @ApiProperty({ type: 'array', items: RUN_EVENT, description: "The run's events in seq order, its `done` last" })
  events: EventDict[];
}
