import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiProduces, getSchemaPath } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { usageCsv } from './usage-csv.js';
import { AdminUsageQueryDto, UsageQueryDto, UsageReport } from './usage-view.dto.js';
import { UsageService, type UsageAnswer } from './usage.service.js';

/** A report as JSON, or as CSV with a header line (`format=csv` or `Accept: text/csv`). */
const REPORT = {
  description: 'Sums per group and totals; `format=csv` (or `Accept: text/csv`): a header line, then a line per group',
  content: { 'application/json': { schema: { $ref: getSchemaPath(UsageReport) } }, 'text/csv': { schema: { type: 'string' as const } } },
};

/** What model calls used and cost: a person's own, and a tenant's (or every tenant's) for its admins and operators. */
@Controller()
@ApiExtraModels(UsageReport)
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  /** `?from=&to=&model=&group_by=day|user|model&format=json|csv`: dates in UTC, both included; default the current month. */
  @Get('usage')
  @ApiOperation({ summary: 'Your own usage: calls, tokens and cost per day, model (or user), with totals; CSV with format=csv' })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse(REPORT)
  async own(@CurrentCaller() caller: Caller, @Query() query: UsageQueryDto, @Headers('accept') accept: string | undefined, @Res({ passthrough: true }) res: Response): Promise<UsageReport | string> {
    return send(await this.usage.own(caller, query, accept), res);
  }

  /** As `GET /usage`, with `tenant_id` (operators) and `user_id`. */
  @Get('admin/usage')
  @ApiOperation({ summary: "A tenant's usage (admins: their own; operators: any, or every tenant), per day, user or model, with totals; CSV with format=csv" })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse(REPORT)
  async tenant(@CurrentCaller() caller: Caller, @Query() query: AdminUsageQueryDto, @Headers('accept') accept: string | undefined, @Res({ passthrough: true }) res: Response): Promise<UsageReport | string> {
    return send(await this.usage.tenant(caller, query, accept), res);
  }
}

function send(answer: UsageAnswer, res: Response): UsageReport | string {
  if (answer.format === 'json') return answer.report;
  res.setHeader('content-type', 'text/csv; charset=utf-8');
  res.setHeader('content-disposition', `attachment; filename="usage-${answer.report.from}-${answer.report.to}.csv"`);
  return usageCsv(answer.report);
}
