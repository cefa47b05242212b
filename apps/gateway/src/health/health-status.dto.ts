import { ApiProperty } from '@nestjs/swagger';

/** The gateway's status and its dependencies'. */
export class HealthStatus {
  @ApiProperty({ enum: ['ok', 'degraded'], description: 'degraded (with 503) when Redis or the database does not answer' })
  status: 'ok' | 'degraded';

  @ApiProperty()
  version: string;

  @ApiProperty({ type: 'integer', description: 'Seconds since the process started' })
  uptime: number;

  @ApiProperty({ enum: ['up', 'down'] })
  redis: 'up' | 'down';

  @ApiProperty({ enum: ['up', 'down'] })
  database: 'up' | 'down';

  @ApiProperty({ enum: ['mysql', 'memory'], description: 'Where conversations are kept (DATAAGENT_SESSION_STORE)' })
  session_store: 'mysql' | 'memory';
}

export class Liveness {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';
}

export class Readiness {
  @ApiProperty({ enum: ['ready', 'not_ready'], description: 'not_ready (with 503) when Redis or the database does not answer' })
  status: 'ready' | 'not_ready';

  @ApiProperty({ enum: ['up', 'down'] })
  redis: 'up' | 'down';

  @ApiProperty({ enum: ['up', 'down'] })
  database: 'up' | 'down';
}
