import { Module } from '@nestjs/common';
import { McpReleases } from './mcp-releases.service.js';
import { McpServersController } from './mcp-servers.controller.js';
import { McpServersService } from './mcp-servers.service.js';
import { McpSignInsController } from './mcp-sign-ins.controller.js';
import { McpSignIns } from './mcp-sign-ins.service.js';

/** Users' own MCP servers: REST registry in MySQL; the workers connect to them, and are told when to let go. */
@Module({ controllers: [McpServersController, McpSignInsController], providers: [McpServersService, McpReleases, McpSignIns], exports: [McpReleases, McpSignIns] })
export class McpModule {}
