import { ApiProperty } from '@nestjs/swagger';

/** An assistant a chat may name as `assistant_id`. */
export class AgentView {
  @ApiProperty({ example: 'default' })
  assistant_id: string;

  @ApiProperty()
  name: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ type: String, nullable: true, description: 'The model the workers run it on; null before a worker has started' })
  model: string | null;
}

export class AgentList {
  @ApiProperty({ type: [AgentView] })
  agents: AgentView[];
}
