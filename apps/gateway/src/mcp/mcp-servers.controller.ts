import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { ApiErrorBody } from '../common/api-error-body.dto.js';
import { MCP_EXTRA_VIEWS, McpCatalogView, McpPasteAnswer, McpServerDeleted, McpServerList, McpServerView } from './mcp-server-views.dto.js';
import { McpServersService } from './mcp-servers.service.js';

/** The body parseMcpServer accepts (docs/mcp.md, "Your MCP servers"), for the OpenAPI document. */
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

/** A Claude Desktop or Cursor config: `{"mcpServers": {...}}`, or the bare map of servers by name. */
const PASTED_CONFIG_BODY = {
  type: 'object',
  description:
    'A pasted MCP client config. Each server is registered as one POST of it would be (same allowlists, limits and name rules); ' +
    '`disabled: true` servers are skipped and reported as refused (`mcp_server_disabled`); a `name` inside an entry is ignored (the key is the name).',
  properties: {
    mcpServers: {
      type: 'object',
      additionalProperties: { ...MCP_SERVER_BODY, required: [], properties: { ...MCP_SERVER_BODY.properties, type: { type: 'string', enum: ['stdio', 'sse', 'http', 'streamable-http'], description: 'Cursor and Claude spelling of transport' } } },
    },
  },
  example: {
    mcpServers: {
      git: { command: 'mcp-server-git', args: ['--repository', '/srv/repo'], env: { GIT_TOKEN: '…' } },
      github: { type: 'http', url: 'https://api.githubcopilot.com/mcp/', headers: { Authorization: 'Bearer …' } },
    },
  },
};

/**
 * A user's own MCP servers, beside the operator's. The caller themself or an admin of their tenant; anyone
 * else's answer 404. Bodies are validated by parseMcpServer, not a DTO: the same rules as the
 * operator's config file, with an error per field.
 */
@Controller('users/:userId/mcp-servers')
@ApiExtraModels(...MCP_EXTRA_VIEWS)
export class McpServersController {
  constructor(private readonly servers: McpServersService) {}

  /** `{servers: [...], max_servers}`: secret values masked, each with its status. */
  @Get()
  @ApiOperation({ summary: "The user's MCP servers (secrets masked, each with its status) and the operator's servers they get" })
  @ApiOkResponse({ type: McpServerList })
  list(@CurrentCaller() caller: Caller, @Param('userId') userId: string): Promise<McpServerList> {
    return this.servers.list(caller, userId);
  }

  /**
   * Registers a server: 201, 409 for an existing name, 403 for a stdio command not allowlisted,
   * 422 naming each bad field. Or a pasted Claude Desktop / Cursor config: each server as if
   * POSTed alone, 201 when all were added, 207 when some were, the refusals' status otherwise.
   */
  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Register an MCP server, or every server of a pasted Claude Desktop / Cursor config',
    description:
      'One server: 201 and the server; 409 `mcp_server_exists`, 403 `mcp_server_not_allowed`, 422 naming each bad field, 429 `mcp_server_limit`. ' +
      'A config (`{"mcpServers": {...}}` or the bare map `{"name": {...}}`): each server goes through the same checks as a single POST, in order. ' +
      'The answer is `{message, added: [server], refused: [{name, error_code, message, details?}]}`: 201 when every server was added, 207 when only some were. ' +
      'When none was: `mcp_servers_refused` with `details.added: []` and `details.refused`, its status the refusals\' common one (403, 409, 422, 429), else 422. ' +
      'Any other shape: 422 `invalid_mcp_config` with `details.accepted_shapes`.',
  })
  @ApiBody({ schema: { oneOf: [MCP_SERVER_BODY, PASTED_CONFIG_BODY] } })
  @ApiExtraModels(McpServerView, McpPasteAnswer)
  @ApiResponse({
    status: 201,
    description: 'The server (one server), or `{message, added, refused: []}` (a config, every server added)',
    schema: { oneOf: [{ $ref: getSchemaPath(McpServerView) }, { $ref: getSchemaPath(McpPasteAnswer) }] },
  })
  @ApiResponse({ status: 207, description: 'A config of which some servers were added: `refused` says why the others were not', type: McpPasteAnswer })
  @ApiResponse({
    status: 422,
    description: '`validation_failed` (one server), `invalid_mcp_config` (no accepted shape) or `mcp_servers_refused` (a config of which nothing was added; also 403, 409, 429 when every refusal had that status)',
    type: ApiErrorBody,
  })
  async create(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response): Promise<McpServerView | McpPasteAnswer> {
    const answer = await this.servers.register(caller, userId, body);
    res.status(answer.status);
    return answer.body;
  }

  /** The server's tools as a worker last listed them: the user's own server of that name, else the global one. */
  @Get(':name/tools')
  @ApiOperation({ summary: "The server's tools as a worker last listed them" })
  @ApiOkResponse({ type: McpCatalogView })
  tools(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string): Promise<McpCatalogView> {
    return this.servers.tools(caller, userId, name);
  }

  /** Replaces a server's config; the body's name, when given, must be the path's. */
  @Put(':name')
  @ApiOperation({ summary: "Replace a server's config" })
  @ApiBody({ schema: MCP_SERVER_BODY })
  @ApiOkResponse({ type: McpServerView })
  replace(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string, @Body() body: unknown): Promise<McpServerView> {
    return this.servers.replace(caller, userId, name, body);
  }

  @Delete(':name')
  @ApiOperation({ summary: 'Remove a server (its connections close on the workers)' })
  @ApiOkResponse({ type: McpServerDeleted })
  remove(@CurrentCaller() caller: Caller, @Param('userId') userId: string, @Param('name') name: string): Promise<McpServerDeleted> {
    return this.servers.remove(caller, userId, name);
  }
}
