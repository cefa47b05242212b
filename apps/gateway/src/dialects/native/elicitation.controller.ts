import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional } from 'class-validator';
import type { Caller } from '#core/auth/caller.js';
import { ELICITATION_ACTIONS, type ElicitationAction } from '#core/events/execution-event.js';
import { CurrentCaller } from '../../auth/api-key.guard.js';
import { ElicitationAnswer } from '../../runs/control-answers.dto.js';
import { ControlService } from '../../runs/run-control.service.js';

export class ElicitationAnswerDto {
  @ApiProperty({ enum: ELICITATION_ACTIONS, description: 'accept (a form: with its content), decline, or cancel (dismissed)' })
  @IsIn(ELICITATION_ACTIONS, { message: 'action must be accept, decline or cancel' })
  action: ElicitationAction;

  @ApiPropertyOptional({ description: "With accept of a form: the form's fields; fields left out take the schema's defaults", type: 'object', additionalProperties: true })
  @IsOptional() @IsObject({ message: 'content must be an object of the form’s fields' })
  content?: Record<string, unknown>;
}

@Controller('elicitations')
export class ElicitationController {
  constructor(private readonly control: ControlService) {}

  /** Answers an elicitation_request: accept (with the form's content), decline or cancel. */
  @Post(':requestId')
  @HttpCode(200)
  @ApiOperation({ summary: "Answer an elicitation_request: accept (with the form's content), decline or cancel" })
  @ApiOkResponse({ type: ElicitationAnswer })
  answer(@CurrentCaller() caller: Caller, @Param('requestId') requestId: string, @Body() body: ElicitationAnswerDto): Promise<ElicitationAnswer> {
    return this.control.answerElicitation(caller, requestId, body.action, body.content);
  }
}
