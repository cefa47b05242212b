import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** What a cancel did: the runs it stopped, or why there were none. */
export class CancelAnswer {
  @ApiProperty()
  session_id: string;

  @ApiProperty({ description: 'Whether a run was stopped' })
  cancelled: boolean;

  @ApiProperty({ type: [String], description: 'The runs stopped (each ends with `done` and `cancelled: true`)' })
  run_ids: string[];

  @ApiPropertyOptional({ enum: ['no_active_run'], description: 'Why nothing was stopped' })
  reason?: 'no_active_run';
}

/** A decision on a `hitl_request`, recorded: the run waiting on it goes on. */
export class HitlDecisionAnswer {
  @ApiProperty()
  request_id: string;

  @ApiProperty({ enum: ['approve', 'reject', 'approve_all'] })
  decision: 'approve' | 'reject' | 'approve_all';

  @ApiProperty({ enum: [true] })
  accepted: true;
}

/** An answer to an `elicitation_request`, recorded: the server gets it, and the run goes on. */
export class ElicitationAnswer {
  @ApiProperty()
  request_id: string;

  @ApiProperty({ enum: ['accept', 'decline', 'cancel'] })
  action: 'accept' | 'decline' | 'cancel';

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'What the server gets: the accepted form, its defaults filled in' })
  content?: Record<string, unknown>;

  @ApiProperty({ enum: [true] })
  accepted: true;
}
