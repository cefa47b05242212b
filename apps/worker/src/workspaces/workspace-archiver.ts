import { createHash } from 'node:crypto';
import path from 'node:path';
import type { RedisClient } from '#transport/redis-connection.js';
import { redisKeys } from '#transport/redis-keys.js';
import { takeLease } from '#transport/redis-lease.js';
import { findStaleWorkspaces } from '#core/workspace/stale-workspaces.js';
import { archiveWorkspace } from '#core/workspace/workspace-archive.js';

/** How long the lease lasts unrenewed while a sweep runs: it is renewed before each workspace. */
const SWEEP_LEASE_MS = 60_000;

export interface WorkspaceArchiverDeps {
  redis: RedisClient;
  /** The workspace root template (DATAAGENT_WORKSPACE_ROOT). */
  rootTemplate: string;
  /** Days without a change after which a workspace is archived. */
  archiveDays: number;
  /** Sweeps start at most this often across all workers. */
  intervalMs: number;
  logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** What one sweep did. */
export interface SweepResult {
  archived: number;
  /** Stale, but changed while being packed, or failed (logged). */
  skipped: number;
}

/**
 * Archives the workspaces nobody changed for DATAAGENT_WORKSPACE_ARCHIVE_DAYS. One worker sweeps
 * at a time, and sweeps start at most once an interval across all workers: the sweep holds a
 * Redis lease (per root template) that it keeps for the rest of the interval when it ends.
 */
export class WorkspaceArchiver {
  private readonly lease: string;

  constructor(private readonly deps: WorkspaceArchiverDeps) {
    const scope = createHash('sha256').update(path.resolve(deps.rootTemplate)).digest('hex').slice(0, 16);
    this.lease = redisKeys.workspaceArchiveLease(scope);
  }

  /**
   * One sweep, unless another worker swept within the interval or is sweeping now.
   * @param signal Stops the sweep before its next workspace (shutdown).
   * @returns what it did, or null when it did not sweep.
   */
  async sweep(signal?: AbortSignal): Promise<SweepResult | null> {
    const { redis, rootTemplate, archiveDays, intervalMs, logger } = this.deps;
    const started = Date.now();
    const lease = await takeLease(redis, this.lease, Math.max(intervalMs, SWEEP_LEASE_MS));
    if (!lease) return null;
    const result: SweepResult = { archived: 0, skipped: 0 };
    try {
      for (const stale of await findStaleWorkspaces(rootTemplate, archiveDays * 86_400_000)) {
        if (signal?.aborted) break;
        // Lost the lease (a frozen event loop): another worker may be sweeping now.
        if (!(await lease.extend(SWEEP_LEASE_MS))) break;
        const archived = await archiveWorkspace(stale).catch((err: unknown) => {
          logger.warn({ err, workspace: stale.path }, 'archiving a workspace failed; it stays as it is');
          return false;
        });
        if (!archived) {
          result.skipped++;
          continue;
        }
        result.archived++;
        logger.info({ workspace: stale.path, last_modified: stale.lastModified.toISOString(), bytes: stale.bytes }, 'archived a workspace');
      }
    } finally {
      // Keep the lease for the rest of the interval, so no other worker sweeps again at once.
      const rest = intervalMs - (Date.now() - started);
      await (rest > 0 ? lease.extend(rest) : lease.release()).catch(() => undefined);
    }
    logger.info({ ...result, took_ms: Date.now() - started }, 'workspace archive sweep');
    return result;
  }
}
