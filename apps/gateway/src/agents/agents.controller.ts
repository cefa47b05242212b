import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { RedisClient } from '#transport/redis-connection.js';
import { BUILTIN_ASSISTANTS } from '#core/config/assistant-catalog.js';
import { AssistantModels } from '#transport/assistant-models.js';
import type { GatewaySettings } from '../infra/gateway-config.js';
import { REDIS, SETTINGS } from '../infra/tokens.js';
import { AgentList } from './agent-view.dto.js';

@Controller('agents')
export class AgentsController {
  private readonly models: AssistantModels;

  constructor(@Inject(REDIS) redis: RedisClient, @Inject(SETTINGS) settings: GatewaySettings) {
    this.models = new AssistantModels(redis, settings.redis.queueName);
  }

  /** The assistants a chat may name as assistant_id, each with the model the workers run it on (null before a worker has started). */
  @Get()
  @ApiOperation({ summary: 'The assistants a chat may name as assistant_id, with the model each runs on' })
  @ApiOkResponse({ type: AgentList })
  async list(): Promise<AgentList> {
    const models = await this.models.read();
    return { agents: BUILTIN_ASSISTANTS.map(({ id, name, description }) => ({ assistant_id: id, name, description, model: models.get(id) ?? null })) };
  }
}
