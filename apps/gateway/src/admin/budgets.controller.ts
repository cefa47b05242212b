import { Body, Controller, Delete, Get, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { BudgetDeleted, BudgetList, BudgetQueryDto, BudgetView, PutBudgetDto } from './budgets.dto.js';
import { BudgetsService } from './budgets.service.js';

/** Token and cost budgets of a tenant and its people: admins for their tenant, operators for every tenant. */
@Controller('admin/budgets')
export class BudgetsController {
  constructor(private readonly budgets: BudgetsService) {}

  /** `?tenant_id=` (operators). */
  @Get()
  @ApiOperation({ summary: "The tenant's budgets, each with what is spent in its current period" })
  @ApiOkResponse({ type: BudgetList })
  list(@CurrentCaller() caller: Caller, @Query() query: BudgetQueryDto): Promise<BudgetList> {
    return this.budgets.list(caller, query);
  }

  @Put()
  @ApiOperation({ summary: 'Sets a budget (one per scope, person, metric and period): created, or its limit replaced' })
  @ApiOkResponse({ type: BudgetView })
  put(@CurrentCaller() caller: Caller, @Body() body: PutBudgetDto): Promise<BudgetView> {
    return this.budgets.put(caller, body);
  }

  /** `?scope=&user_id=&metric=&period=` (and `tenant_id=` for operators). */
  @Delete()
  @ApiOperation({ summary: 'Removes a budget' })
  @ApiOkResponse({ type: BudgetDeleted })
  remove(@CurrentCaller() caller: Caller, @Query() query: BudgetQueryDto): Promise<BudgetDeleted> {
    return this.budgets.remove(caller, query);
  }
}
