import { Module } from '@nestjs/common';
import { SessionAccess } from '../sessions/session-access.service.js';
import { ParkedRunExpiryService } from './parked-run-expiry.service.js';
import { ControlService } from './run-control.service.js';
import { RunsService } from './runs.service.js';

/**
 * The seam every dialect uses: submit a run, follow its events, control it (cancel, approvals,
 * answers), and the sweep that wakes parked runs whose wait is over. Dialects import this
 * module and nothing of each other.
 */
@Module({
  providers: [SessionAccess, RunsService, ControlService, ParkedRunExpiryService],
  exports: [SessionAccess, RunsService, ControlService],
})
export class RunsModule {}
