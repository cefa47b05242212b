import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ApiKeyQueryDto, CreateApiKeyDto } from './api-keys.dto.js';
import { ApiKeysService } from './api-keys.service.js';

/** Issued API keys: admins for their tenant, operators for every tenant. */
@Controller('admin/api-keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  /** 201 `{key_id, key, prefix, ...}`: the key is shown here only. */
  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Issue a key for a user (admins: their tenant; operators: any); the key is shown in this answer only' })
  create(@CurrentCaller() caller: Caller, @Body() body: CreateApiKeyDto) {
    return this.keys.create(caller, body);
  }

  /** `?tenant_id=` (operators) `&limit=&offset=`, newest first; never the keys. */
  @Get()
  @ApiOperation({ summary: 'Issued keys, newest first, never the keys themselves' })
  list(@CurrentCaller() caller: Caller, @Query() query: ApiKeyQueryDto) {
    return this.keys.list(caller, query);
  }

  @Delete(':keyId')
  @ApiOperation({ summary: 'Revoke a key' })
  revoke(@CurrentCaller() caller: Caller, @Param('keyId') keyId: string) {
    return this.keys.revoke(caller, keyId);
  }
}
