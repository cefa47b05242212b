import { Module } from '@nestjs/common';
import { RunsModule } from '../../runs/runs.module.js';
import { AgUiController } from './ag-ui.controller.js';

/** The AG-UI protocol's agent endpoint. */
@Module({ imports: [RunsModule], controllers: [AgUiController] })
export class AgUiModule {}
