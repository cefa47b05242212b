import { Module } from '@nestjs/common';
import { RunsModule } from '../../runs/runs.module.js';
import { A2aController } from './a2a.controller.js';
import { AgentCardController } from './agent-card.controller.js';

/** Agent2Agent: the JSON-RPC endpoint and the agent card. */
@Module({ imports: [RunsModule], controllers: [A2aController, AgentCardController] })
export class A2aModule {}
