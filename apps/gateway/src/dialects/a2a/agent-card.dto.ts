import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** Where and how an A2A client reaches the agent. */
export class AgentInterfaceView {
  @ApiProperty({ example: 'https://dataagent.example.com/api/v1/a2a' })
  url: string;

  @ApiProperty({ enum: ['JSONRPC'] })
  protocolBinding: string;

  @ApiProperty({ example: '1.0' })
  protocolVersion: string;
}

export class AgentProviderView {
  @ApiProperty()
  organization: string;

  @ApiProperty()
  url: string;
}

export class AgentCapabilitiesView {
  @ApiProperty()
  streaming: boolean;

  @ApiProperty()
  pushNotifications: boolean;

  @ApiProperty()
  extendedAgentCard: boolean;
}

/** An assistant, as a skill: its id is what message metadata `assistant_id` names. */
export class AgentSkillView {
  @ApiProperty({ example: 'default' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: [String] })
  tags: string[];

  @ApiProperty({ type: [String] })
  examples: string[];
}

/** An A2A 1.0 agent card (proto JSON). */
export class AgentCardView {
  @ApiProperty()
  name: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: [AgentInterfaceView] })
  supportedInterfaces: AgentInterfaceView[];

  @ApiProperty({ type: AgentProviderView })
  provider: AgentProviderView;

  @ApiProperty()
  version: string;

  @ApiPropertyOptional()
  documentationUrl: string;

  @ApiProperty({ type: AgentCapabilitiesView })
  capabilities: AgentCapabilitiesView;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: true },
    description: '`api_key` (the X-API-Key header) and `bearer` (the same key as Authorization: Bearer)',
  })
  securitySchemes: Record<string, Record<string, unknown>>;

  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'Either scheme' })
  securityRequirements: Array<Record<string, unknown>>;

  @ApiProperty({ type: [String] })
  defaultInputModes: string[];

  @ApiProperty({ type: [String] })
  defaultOutputModes: string[];

  @ApiProperty({ type: [AgentSkillView] })
  skills: AgentSkillView[];
}
