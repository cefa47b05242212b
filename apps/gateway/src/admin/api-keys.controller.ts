import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ApiKeyList, ApiKeyRevoked, IssuedApiKey } from './api-key-view.dto.js';
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
  @ApiCreatedResponse({ type: IssuedApiKey })
  create(@CurrentCaller() caller: Caller, @Body() body: CreateApiKeyDto): Promise<IssuedApiKey> {
    return this.keys.create(caller, body);
  }

  /** `?tenant_id=` (operators) `&limit=&offset=`, newest first; never the keys. */
  @Get()
  @ApiOperation({ summary: 'Issued keys, newest first, never the keys themselves' })
  @ApiOkResponse({ type: ApiKeyList })
  list(@CurrentCaller() caller: Caller, @Query() query: ApiKeyQueryDto): Promise<ApiKeyList> {
    return this.keys.list(caller, query);
  }

  @Delete(':keyId')
  @ApiOperation({ summary: 'Revoke a key' })
  @ApiOkResponse({ type: ApiKeyRevoked })
  revoke(@CurrentCaller() caller: Caller, @Param('keyId') keyId: string): Promise<ApiKeyRevoked> {
    return this.keys.revoke(caller, keyId);
  }
}
