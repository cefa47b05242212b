import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import type { Caller } from '#core/session/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ControlService, type HitlDecisionType } from './control.service.js';

export class HitlDecisionDto {
  @IsIn(['approve', 'reject', 'approve_all'], { message: 'decision must be approve, reject or approve_all' })
  decision: HitlDecisionType;

  @IsOptional() @IsString() @MaxLength(2000)
  message?: string;
}

@Controller('hitl')
export class HitlController {
  constructor(private readonly control: ControlService) {}

  /** Answers a hitl_request: approve, reject, or approve_all (the rest of the session). */
  @Post(':requestId')
  @HttpCode(200)
  decide(@CurrentCaller() caller: Caller, @Param('requestId') requestId: string, @Body() body: HitlDecisionDto) {
    return this.control.decide(caller, requestId, body.decision, body.message);
  }
}
