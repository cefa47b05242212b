import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

class OpenAiError {
  @ApiProperty({ example: 'The model "nope" does not exist: GET /v1/models lists the assistants' })
  message: string;

  @ApiProperty({ description: "OpenAI's error type for the status", example: 'not_found_error' })
  type: string;

  @ApiPropertyOptional({ description: 'The first bad field', type: String, nullable: true, example: 'model' })
  param: string | null;

  @ApiProperty({ description: "DataAgent's error_code", example: 'model_not_found' })
  code: string;
}

/** The error body of the OpenAI-compatible routes (`openAiErrorBody()`): OpenAI's shape, so clients' own error classes apply. */
export class OpenAiErrorBody {
  @ApiProperty({ type: OpenAiError })
  error: OpenAiError;
}
