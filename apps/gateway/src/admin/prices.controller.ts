import { Body, Controller, Get, Put, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ModelPriceDto, PriceChangeList, PriceChangeQueryDto, PricesView, PriceTableDto } from './prices.dto.js';
import { PricesService } from './prices.service.js';

/** What model calls cost: the table in force (admins read it), replaced and audited by operators. */
@Controller('admin/prices')
@ApiExtraModels(ModelPriceDto)
export class PricesController {
  constructor(private readonly prices: PricesService) {}

  @Get()
  @ApiOperation({ summary: 'The price table in force, its currency, and where it comes from (admins)' })
  @ApiOkResponse({ type: PricesView })
  current(@CurrentCaller() caller: Caller): Promise<PricesView> {
    return this.prices.current(caller);
  }

  /** The whole table: models left out are no longer priced. */
  @Put()
  @ApiOperation({ summary: 'Replace the price table; it wins over DATAAGENT_MODEL_PRICES and applies on every worker within DATAAGENT_PRICES_CACHE_SECONDS (operators)' })
  @ApiOkResponse({ type: PricesView })
  replace(@CurrentCaller() caller: Caller, @Body() body: PriceTableDto): Promise<PricesView> {
    return this.prices.replace(caller, body);
  }

  /** `?limit=&offset=`, newest first. */
  @Get('changes')
  @ApiOperation({ summary: 'Every replacement of the price table: who, when, before and after, newest first (operators)' })
  @ApiOkResponse({ type: PriceChangeList })
  changes(@CurrentCaller() caller: Caller, @Query() query: PriceChangeQueryDto): Promise<PriceChangeList> {
    return this.prices.changes(caller, query);
  }
}
