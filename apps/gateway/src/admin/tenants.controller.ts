import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { TenantDeleted, TenantList, TenantView } from './tenant-view.dto.js';
import { CreateTenantDto, TenantQueryDto, TenantSettingsDto } from './tenants.dto.js';
import { TenantsService } from './tenants.service.js';

/** Tenants' limits and feature switches: operators only (403 for anyone else). */
@Controller('admin/tenants')
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a tenant with its limits and feature switches (operators)' })
  @ApiCreatedResponse({ type: TenantView })
  create(@CurrentCaller() caller: Caller, @Body() body: CreateTenantDto): Promise<TenantView> {
    return this.tenants.create(caller, body);
  }

  /** `?limit=&offset=`, by tenant id. */
  @Get()
  @ApiOperation({ summary: 'Tenants, by tenant id (operators)' })
  @ApiOkResponse({ type: TenantList })
  list(@CurrentCaller() caller: Caller, @Query() query: TenantQueryDto): Promise<TenantList> {
    return this.tenants.list(caller, query);
  }

  @Get(':tenantId')
  @ApiOperation({ summary: 'One tenant (operators)' })
  @ApiOkResponse({ type: TenantView })
  get(@CurrentCaller() caller: Caller, @Param('tenantId') tenantId: string): Promise<TenantView> {
    return this.tenants.get(caller, tenantId);
  }

  /** Changes the fields the body names; null puts a limit back to the deployment's default. */
  @Put(':tenantId')
  @ApiOperation({ summary: "Change a tenant's settings; null puts a limit back to the deployment's default (operators)" })
  @ApiOkResponse({ type: TenantView })
  update(@CurrentCaller() caller: Caller, @Param('tenantId') tenantId: string, @Body() body: TenantSettingsDto): Promise<TenantView> {
    return this.tenants.update(caller, tenantId, body);
  }

  /** Drops the tenant's settings and revokes its issued keys. */
  @Delete(':tenantId')
  @ApiOperation({ summary: "Drop a tenant's settings and revoke its issued keys (operators)" })
  @ApiOkResponse({ type: TenantDeleted })
  remove(@CurrentCaller() caller: Caller, @Param('tenantId') tenantId: string): Promise<TenantDeleted> {
    return this.tenants.remove(caller, tenantId);
  }
}
