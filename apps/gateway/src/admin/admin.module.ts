import { Module } from '@nestjs/common';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysService } from './api-keys.service.js';
import { BudgetsController } from './budgets.controller.js';
import { BudgetsService } from './budgets.service.js';
import { PricesController } from './prices.controller.js';
import { PricesService } from './prices.service.js';
import { ToolGovernanceController } from './tool-governance.controller.js';
import { ToolGovernanceService } from './tool-governance.service.js';
import { TenantsController } from './tenants.controller.js';
import { TenantsService } from './tenants.service.js';

/** Administration: tenants (operators), budgets, issued API keys, MCP tool bindings, the MCP call audit, and model prices. */
@Module({ controllers: [ApiKeysController, BudgetsController, ToolGovernanceController, TenantsController, PricesController], providers: [ApiKeysService, BudgetsService, ToolGovernanceService, TenantsService, PricesService] })
export class AdminModule {}
