import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBody, ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { McpServersService } from './mcp-servers.service.js';

/** The body parseMcpServer accepts (README, "Your MCP servers"), for the OpenAPI document. */
const MCP_SERVER_BODY = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', description: 'Letters, digits, - and _ (no __); tools are named name.tool' },
    transport: { type: 'string', enum: ['stdio', 'sse', 'streamable-http'], description: 'Inferred from command or url when absent' },
    command: { type: 'string', description: 'stdio: a command on DATAAGENT_MCP_STDIO_ALLOW' },
    args: { type: 'array', items: { type: 'string' } },
    env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Secret: stored encrypted, shown as ***' },
    url: { type: 'string', description: 'sse and streamable-http' },
    headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Secret: stored encrypted, shown as ***' },
    timeout_ms: { type: 'integer' },
    disabled: { type: 'boolean' },
    description: { type: 'string' },
    trigger_keywords: { type: 'array', items: { type: 'string' } },
  },
};

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
  @ApiOperation({ summary: "The user's MCP servers (secrets masked, each with its status) and the operator's servers they get" })
  list(@CurrentCaller() caller: Caller, @Param('userId') userId: string) {
    return this.servers.list(caller, userId);
  }

  /** Registers a server: 201, 409 for an existing name, 403 for a stdio command not allowlisted, 422 naming each bad field. */
  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Register an MCP server: 409 for an existing name, 403 for a stdio command not allowlisted' })
  @ApiBody({ schema: MCP_SERVER_BODY })
  create(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Body() body: unknown) {
    return this.servers.create(caller, userId, body);
  }

  /** The server's tools as a worker last listed them: the user's own server of that name, else the global one. */
  @Get(':name/tools')
  @ApiOperation({ summary: "The server's tools as a worker last listed them" })
  tools(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string) {
    return this.servers.tools(caller, userId, name);
  }

  /** Replaces a server's config; the body's name, when given, must be the path's. */
  @Put(':name')
  @ApiOperation({ summary: "Replace a server's config" })
  @ApiBody({ schema: MCP_SERVER_BODY })
  replace(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string, @Body() body: unknown) {
    return this.servers.replace(caller, userId, name, body);
  }

  @Delete(':name')
  @ApiOperation({ summary: 'Remove a server (its connections close on the workers)' })
  remove(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string) {
    return this.servers.remove(caller, userId, name);
  }
}
