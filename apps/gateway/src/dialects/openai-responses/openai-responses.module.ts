import { Module } from '@nestjs/common';
import { RunsModule } from '../../runs/runs.module.js';
import { ResponsesController } from './responses.controller.js';

/** OpenAI's Responses API (`/v1/responses`). */
@Module({ imports: [RunsModule], controllers: [ResponsesController] })
export class OpenAiResponsesModule {}
