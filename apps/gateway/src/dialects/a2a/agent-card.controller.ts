import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { BUILTIN_ASSISTANTS } from '#core/config/assistant-catalog.js';
import { Public } from '../../auth/api-key.guard.js';
import { API_PREFIX } from '../../common/api-prefix.js';
import type { GatewaySettings } from '../../infra/gateway-config.js';
import { SETTINGS } from '../../infra/tokens.js';
import { A2A_RPC_PATH } from './a2a.controller.js';
import { AgentCardView } from './agent-card.dto.js';

/** Where A2A clients look for an agent's card, outside the API prefix (main.ts leaves it out). */
export const AGENT_CARD_PATH = '.well-known/agent-card.json';

/**
 * The A2A agent card: public, as discovery needs it. The assistants are its skills, the API key
 * its security scheme, and its one interface the JSON-RPC endpoint at DATAAGENT_PUBLIC_URL (or
 * where the gateway listens).
 */
@ApiTags('A2A')
@Controller()
export class AgentCardController {
  constructor(@Inject(SETTINGS) private readonly settings: GatewaySettings) {}

  @Get(AGENT_CARD_PATH)
  @Public()
  @Header('cache-control', 'public, max-age=300')
  @ApiOperation({ summary: 'The A2A 1.0 agent card: the assistants as skills, the API key scheme, the JSON-RPC endpoint' })
  @ApiOkResponse({ type: AgentCardView })
  card(): AgentCardView {
    const base = (this.settings.server.publicUrl ?? `http://localhost:${this.settings.server.port}`).replace(/\/+$/, '');
    return {
      name: 'DataAgent',
      description: "DataAgent's assistants: they answer, plan and use tools, and ask before sensitive actions (the task waits in input-required). Name an assistant with message metadata assistant_id (a skill id); the default is used otherwise.",
      // One endpoint, both versions: a 1.0 client picks 1.0, a 0.3 one (the SDK's legacy transport) 0.3.
      supportedInterfaces: ['1.0', '0.3'].map((protocolVersion) => ({ url: `${base}/${API_PREFIX}/${A2A_RPC_PATH}`, protocolBinding: 'JSONRPC', protocolVersion })),
      provider: { organization: 'DataAgent', url: base },
      version: this.settings.version,
      documentationUrl: `${base}/docs`,
      capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
      securitySchemes: {
        api_key: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key', description: 'A DataAgent API key' } },
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'The same API key as Authorization: Bearer <key>' } },
      },
      securityRequirements: [{ schemes: { api_key: { list: [] } } }, { schemes: { bearer: { list: [] } } }],
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: BUILTIN_ASSISTANTS.map((a) => ({ id: a.id, name: a.name, description: a.description, tags: ['assistant'], examples: [] })),
    };
  }
}
