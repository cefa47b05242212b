import { Module } from '@nestjs/common';
import { ToolGovernanceController } from './tool-governance.controller.js';
import { ToolGovernanceService } from './tool-governance.service.js';

/** Tenant administration: MCP tool bindings and the MCP call audit. */
@Module({ controllers: [ToolGovernanceController], providers: [ToolGovernanceService] })
export class AdminModule {}
