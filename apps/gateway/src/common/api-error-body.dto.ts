import { ApiProperty } from '@nestjs/swagger';

/** The body of every error of the DataAgent API, as `ApiError.toBody()` writes it. */
export class ApiErrorBody {
  @ApiProperty({ description: 'Stable code a client can branch on', example: 'validation_failed' })
  error_code: string;

  @ApiProperty({ description: 'What went wrong, for a person', example: 'Invalid request: message: message must not be empty' })
  message: string;

  @ApiProperty({
    description: 'Specifics: `fields` names each bad field of a 422, `limit` the quota of a 429, ...',
    type: 'object',
    additionalProperties: true,
    example: { fields: { message: ['message must not be empty'] } },
  })
  details: Record<string, unknown>;
}
