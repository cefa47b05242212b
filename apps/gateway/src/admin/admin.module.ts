import { Module } from '@nestjs/common';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysService } from './api-keys.service.js';
import { ToolGovernanceController } from './tool-governance.controller.js';
import { ToolGovernanceService } from './tool-governance.service.js';
import { TenantsController } from './tenants.controller.js';
import { TenantsService } from './tenants.service.js';

/** Administration: tenants (operators), issued API keys, MCP tool bindings and the MCP call audit. */
@Module({ controllers: [ApiKeysController, ToolGovernanceController, TenantsController], providers: [ApiKeysService, ToolGovernanceService, TenantsService] })
export class AdminModule {}
