import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../../auth/api-key.guard.js';
import { HitlDecisionAnswer } from '../../runs/control-answers.dto.js';
import { ControlService, type HitlDecisionType } from '../../runs/run-control.service.js';

export class HitlDecisionDto {
  @ApiProperty({ enum: ['approve', 'reject', 'approve_all'], description: 'approve_all: approve this call and those the session asks for next (DATAAGENT_HITL_APPROVE_ALL_SECONDS)' })
  @IsIn(['approve', 'reject', 'approve_all'], { message: 'decision must be approve, reject or approve_all' })
  decision: HitlDecisionType;

  @ApiPropertyOptional({ description: 'A note for the model', maxLength: 2000 })
  @IsOptional() @IsString() @MaxLength(2000)
  message?: string;
}

@Controller('hitl')
export class HitlController {
  constructor(private readonly control: ControlService) {}

  /** Answers a hitl_request: approve, reject, or approve_all (the rest of the session). */
  @Post(':requestId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Answer a hitl_request: approve, reject or approve_all' })
  @ApiOkResponse({ type: HitlDecisionAnswer })
  decide(@CurrentCaller() caller: Caller, @Param('requestId') requestId: string, @Body() body: HitlDecisionDto): Promise<HitlDecisionAnswer> {
    return this.control.decide(caller, requestId, body.decision, body.message);
  }
}
