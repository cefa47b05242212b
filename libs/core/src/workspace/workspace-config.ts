import { IsInt, IsNumber, IsString, Min, MinLength } from 'class-validator';
import { Env } from '../config/env.js';
import { DEFAULT_WORKSPACE_QUOTA_BYTES, DEFAULT_WORKSPACE_ROOT } from './workspace.js';

/** Users' workspaces (seed 002, Req 33): where they live, what they may hold, when they are archived. */
export class WorkspaceConfig {
  /** `{tenant_id}` and `{user_id}` become sanitised ids; without `{user_id}` each user's folder goes below it. */
  @Env('DATAAGENT_WORKSPACE_ROOT') @IsString() @MinLength(1)
  rootTemplate = DEFAULT_WORKSPACE_ROOT;

  @Env('DATAAGENT_WORKSPACE_QUOTA', 'bytes') @IsInt({ message: 'must be a size: bytes, or with a unit (500MB, 2GB, 1GiB)' }) @Min(1)
  quotaBytes = DEFAULT_WORKSPACE_QUOTA_BYTES;

  /** Days without a change after which a workspace folder is packed into `<folder>.tar.gz`; 0: never. */
  @Env('DATAAGENT_WORKSPACE_ARCHIVE_DAYS', 'number') @IsNumber({}, { message: 'must be a number of days' }) @Min(0)
  archiveDays = 30;

  /** Seconds between archive sweeps; one worker sweeps at a time. */
  @Env('DATAAGENT_WORKSPACE_ARCHIVE_INTERVAL_SECONDS', 'number') @IsNumber({}, { message: 'must be a number of seconds' }) @Min(0.1)
  archiveIntervalSeconds = 3600;
}
