import { Controller, Get } from '@nestjs/common';
import { BUILTIN_ASSISTANTS } from '#core/engine/assistant-catalog.js';

@Controller('agents')
export class AgentsController {
  /** The assistants a chat may name as assistant_id. */
  @Get()
  list() {
    return { agents: BUILTIN_ASSISTANTS.map(({ id, name, description }) => ({ assistant_id: id, name, description })) };
  }
}
