import { IsInt, IsNumber, IsString, Min, MinLength } from 'class-validator';
import { Env } from '../config/env.js';
import { DEFAULT_WORKSPACE_QUOTA_BYTES, DEFAULT_WORKSPACE_ROOT } from './workspace.js';

/** Users' workspaces: where they live, what they may hold, when they are archived. */
export class WorkspaceConfig {
  /**
   * Per-user folder for the file and shell tools: `{tenant_id}` and `{user_id}` become sanitised
   * ids; without `{user_id}` each user's folder goes below it. Folders of the older `{user_id}`
   * layout are moved under `default/` once.
   * @defaultValue `/data/workspaces/{tenant_id}/{user_id}` (`npm start`: `.data/workspaces/{tenant_id}/{user_id}`)
   */
  @Env('DATAAGENT_WORKSPACE_ROOT') @IsString() @MinLength(1)
  rootTemplate = DEFAULT_WORKSPACE_ROOT;

  /** Bytes one user's workspace may hold (`500MB`, `2GB`, …), for tenants without their own `workspace_quota`. */
  @Env('DATAAGENT_WORKSPACE_QUOTA', 'bytes') @IsInt({ message: 'must be a size: bytes, or with a unit (500MB, 2GB, 1GiB)' }) @Min(1)
  quotaBytes = DEFAULT_WORKSPACE_QUOTA_BYTES;

  /** A workspace folder nothing changed or used for this many days is packed into `<folder>.tar.gz` beside it and unpacked on its next use; 0: never. */
  @Env('DATAAGENT_WORKSPACE_ARCHIVE_DAYS', 'number') @IsNumber({}, { message: 'must be a number of days' }) @Min(0)
  archiveDays = 30;

  /** Seconds between archive sweeps; one worker sweeps at a time. */
  @Env('DATAAGENT_WORKSPACE_ARCHIVE_INTERVAL_SECONDS', 'number') @IsNumber({}, { message: 'must be a number of seconds' }) @Min(0.1)
  archiveIntervalSeconds = 3600;
}
