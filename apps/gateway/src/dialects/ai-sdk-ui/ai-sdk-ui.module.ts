import { Module } from '@nestjs/common';
import { RunsModule } from '../../runs/runs.module.js';
import { UiChatController } from './ui-chat.controller.js';

/** The AI SDK's UI message stream (`useChat`). */
@Module({ imports: [RunsModule], controllers: [UiChatController] })
export class AiSdkUiModule {}
