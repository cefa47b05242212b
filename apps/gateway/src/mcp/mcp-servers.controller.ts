import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import type { Caller } from '#core/session/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { McpServersService } from './mcp-servers.service.js';

/**
 * A user's own MCP servers (Req 30). The caller themself or an admin of their tenant; anyone
 * else's answer 404. Bodies are validated by parseMcpServer, not a DTO: the same rules as the
 * operator's config file, with an error per field.
 */
@Controller('users/:userId/mcp-servers')
export class McpServersController {
  constructor(private readonly servers: McpServersService) {}

  /** `{servers: [...], max_servers}`: secret values masked, each with its status. */
  @Get()
  list(@CurrentCaller() caller: Caller, @Param('userId') userId: string) {
    return this.servers.list(caller, userId);
  }

  /** Registers a server: 201, 409 for an existing name, 403 for a stdio command not allowlisted, 422 naming each bad field. */
  @Post()
  @HttpCode(201)
  create(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Body() body: unknown) {
    return this.servers.create(caller, userId, body);
  }

  /** The server's tools as a worker last listed them: the user's own server of that name, else the global one. */
  @Get(':name/tools')
  tools(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string) {
    return this.servers.tools(caller, userId, name);
  }

  /** Replaces a server's config; the body's name, when given, must be the path's. */
  @Put(':name')
  replace(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string, @Body() body: unknown) {
    return this.servers.replace(caller, userId, name, body);
  }

  @Delete(':name')
  remove(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string) {
    return this.servers.remove(caller, userId, name);
  }
}
