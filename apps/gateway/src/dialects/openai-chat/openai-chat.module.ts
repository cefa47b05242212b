import { Module } from '@nestjs/common';
import { RunsModule } from '../../runs/runs.module.js';
import { OpenAiCompatController } from './openai-compat.controller.js';

/** OpenAI's chat completions (`/v1/chat/completions`, `/v1/models`). */
@Module({ imports: [RunsModule], controllers: [OpenAiCompatController] })
export class OpenAiChatModule {}
