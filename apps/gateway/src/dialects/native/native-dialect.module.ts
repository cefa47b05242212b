import { Module } from '@nestjs/common';
import { McpModule } from '../../mcp/mcp.module.js';
import { RunsModule } from '../../runs/runs.module.js';
import { ChatController } from './chat.controller.js';
import { ChatSocketGateway } from './chat.gateway.js';
import { ElicitationController } from './elicitation.controller.js';
import { EventStreamController } from './event-stream.controller.js';
import { HitlController } from './hitl.controller.js';
import { UserSockets } from './user-sockets.js';
import { WsChatServer } from './ws-chat.server.js';

/** DataAgent's own dialect: REST chat, SSE, Socket.IO and the plain WebSocket, approvals and MCP answers. */
@Module({
  imports: [RunsModule, McpModule],
  controllers: [ChatController, EventStreamController, HitlController, ElicitationController],
  providers: [UserSockets, ChatSocketGateway, WsChatServer],
})
export class NativeDialectModule {}
