import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { CreateTenantDto, TenantQueryDto, TenantSettingsDto } from './tenants.dto.js';
import { TenantsService } from './tenants.service.js';

/** Tenants' limits and feature switches: operators only (403 for anyone else). */
@Controller('admin/tenants')
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a tenant with its limits and feature switches (operators)' })
  create(@CurrentCaller() caller: Caller, @Body() body: CreateTenantDto) {
    return this.tenants.create(caller, body);
  }

  /** `?limit=&offset=`, by tenant id. */
  @Get()
  @ApiOperation({ summary: 'Tenants, by tenant id (operators)' })
  list(@CurrentCaller() caller: Caller, @Query() query: TenantQueryDto) {
    return this.tenants.list(caller, query);
  }

  @Get(':tenantId')
  @ApiOperation({ summary: 'One tenant (operators)' })
  get(@CurrentCaller() caller: Caller, @Param('tenantId') tenantId: string) {
    return this.tenants.get(caller, tenantId);
  }

  /** Changes the fields the body names; null puts a limit back to the deployment's default. */
  @Put(':tenantId')
  @ApiOperation({ summary: "Change a tenant's settings; null puts a limit back to the deployment's default (operators)" })
  update(@CurrentCaller() caller: Caller, @Param('tenantId') tenantId: string, @Body() body: TenantSettingsDto) {
    return this.tenants.update(caller, tenantId, body);
  }

  /** Drops the tenant's settings and revokes its issued keys. */
  @Delete(':tenantId')
  @ApiOperation({ summary: "Drop a tenant's settings and revoke its issued keys (operators)" })
  remove(@CurrentCaller() caller: Caller, @Param('tenantId') tenantId: string) {
    return this.tenants.remove(caller, tenantId);
  }
}
