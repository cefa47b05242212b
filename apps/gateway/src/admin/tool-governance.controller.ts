import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Caller } from '#core/auth/caller.js';
import { CurrentCaller } from '../auth/api-key.guard.js';
import { CreateToolBindingDto, ToolCallQueryDto } from './tool-governance.dto.js';
import { ToolBindingDeleted, ToolBindingList, ToolBindingView, ToolCallList } from './tool-governance-views.dto.js';
import { ToolGovernanceService } from './tool-governance.service.js';

/** Admins of a tenant: which MCP tools its assistants and keys may use, and the audit of every call. */
@Controller('admin')
export class ToolGovernanceController {
  constructor(private readonly governance: ToolGovernanceService) {}

  /** Binds tools to an assistant or an API key: from then on they get only the tools their bindings list. */
  @Post('tool-bindings')
  @HttpCode(201)
  @ApiOperation({ summary: 'Bind MCP tools to an assistant or an API key (admins)' })
  @ApiCreatedResponse({ type: ToolBindingView })
  createBinding(@CurrentCaller() caller: Caller, @Body() body: CreateToolBindingDto): Promise<ToolBindingView> {
    return this.governance.createBinding(caller, body);
  }

  @Get('tool-bindings')
  @ApiOperation({ summary: "The tenant's tool bindings (admins)" })
  @ApiOkResponse({ type: ToolBindingList })
  listBindings(@CurrentCaller() caller: Caller): Promise<ToolBindingList> {
    return this.governance.listBindings(caller);
  }

  @Delete('tool-bindings/:bindingId')
  @ApiOperation({ summary: 'Delete a tool binding (admins)' })
  @ApiOkResponse({ type: ToolBindingDeleted })
  deleteBinding(@CurrentCaller() caller: Caller, @Param('bindingId') bindingId: string): Promise<ToolBindingDeleted> {
    return this.governance.deleteBinding(caller, bindingId);
  }

  /** `?session_id=&tool_name=&status=&limit=&offset=`, newest first. */
  @Get('tool-calls')
  @ApiOperation({ summary: 'The MCP tool call audit, newest first (admins)' })
  @ApiOkResponse({ type: ToolCallList })
  listCalls(@CurrentCaller() caller: Caller, @Query() query: ToolCallQueryDto): Promise<ToolCallList> {
    return this.governance.listCalls(caller, query);
  }
}
