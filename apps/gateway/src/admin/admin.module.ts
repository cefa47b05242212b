import { Module } from '@nestjs/common';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysService } from './api-keys.service.js';
import { ToolGovernanceController } from './tool-governance.controller.js';
import { ToolGovernanceService } from './tool-governance.service.js';

/** Tenant administration: issued API keys, MCP tool bindings and the MCP call audit. */
@Module({ controllers: [ApiKeysController, ToolGovernanceController], providers: [ApiKeysService, ToolGovernanceService] })
export class AdminModule {}
