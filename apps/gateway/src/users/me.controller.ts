import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { SETTINGS } from '../infra/tokens.js';
import { WhoAmI } from './user-answers.dto.js';

@Controller('me')
export class MeController {
  constructor(@Inject(SETTINGS) private readonly settings: GatewaySettings) {}

  /**
   * Who the key belongs to: clients need the user id for the per-user routes (MCP servers,
   * memory), and a sign-in form a cheap way to check a key (401 when it is not valid).
   */
  @Get()
  @ApiOperation({ summary: 'Who the key belongs to: tenant, user and role (401 for a bad key)' })
  @ApiOkResponse({ type: WhoAmI })
  whoAmI(@CurrentCaller() caller: Caller): WhoAmI {
    return { tenant_id: caller.tenantId, user_id: caller.userId, role: caller.role, auth_disabled: this.settings.server.authDisabled };
  }
}
