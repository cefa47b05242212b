import { ApiProperty } from '@nestjs/swagger';

/** A stream ticket for one run's event stream (POST /api/v1/runs/{run_id}/stream-tickets). */
export class StreamTicketDto {
  @ApiProperty({ description: 'The ticket: pass it as `?ticket=`; shown once, never stored', example: 'dast_4Jd…' })
  ticket: string;

  @ApiProperty({ description: 'The run whose events it opens' })
  run_id: string;

  @ApiProperty({ description: 'The stream URL (path and query) with the ticket, for `new EventSource(url)`', example: '/api/v1/runs/1f30e11e-…/events?ticket=dast_4Jd…' })
  url: string;

  @ApiProperty({ description: 'When it stops opening the stream (an open stream goes on)', format: 'date-time' })
  expires_at: string;

  @ApiProperty({ description: 'Seconds it is valid for (DATAAGENT_STREAM_TICKET_SECONDS)' })
  expires_in: number;
}
