/**
 * Archives stale workspaces now, or with `--dry-run` lists what a sweep would archive without
 * touching anything (no Redis needed):
 *
 *   npm run workspaces:archive -- --dry-run
 *
 * Reads the workers' settings (DATAAGENT_WORKSPACE_ROOT, DATAAGENT_WORKSPACE_ARCHIVE_DAYS, and
 * DATAAGENT_REDIS_URL for a real sweep, which takes the workers' lease so it never races them).
 */
import 'reflect-metadata';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '#core/config/env.js';
import { RedisConfig } from '#core/config/settings.js';
import { WorkspaceConfig } from '#core/workspace/workspace-config.js';
import { formatBytes } from '#core/llm/byte-budget.js';
import { findStaleWorkspaces } from '#core/workspace/stale-workspaces.js';
import { createRedis, failFast } from '#transport/redis-connection.js';
import { WorkspaceArchiver } from './workspaces/workspace-archiver.js';

async function main(argv: string[]): Promise<number> {
  const dryRun = argv.includes('--dry-run');
  const workspace = loadConfig(WorkspaceConfig, process.env, argv);
  if (workspace.archiveDays === 0) {
    console.log('Workspace archiving is off (DATAAGENT_WORKSPACE_ARCHIVE_DAYS=0).');
    return 0;
  }
  if (dryRun) {
    const stale = await findStaleWorkspaces(workspace.rootTemplate, workspace.archiveDays * 86_400_000);
    for (const folder of stale) console.log(`${folder.path}  last modified ${folder.lastModified.toISOString()}  ${formatBytes(folder.bytes)}`);
    const total = stale.reduce((sum, folder) => sum + folder.bytes, 0);
    console.log(`${stale.length} workspace(s) untouched for ${workspace.archiveDays} days would be archived (${formatBytes(total)}); dry run, nothing changed.`);
    return 0;
  }
  const redis = createRedis(loadConfig(RedisConfig, process.env, argv), 'archive-workspaces', failFast());
  try {
    const logger = pino({ base: { service: 'archive-workspaces' } });
    // Its lease lasts for this sweep only: the workers' schedule goes on as before.
    const result = await new WorkspaceArchiver({ redis, rootTemplate: workspace.rootTemplate, archiveDays: workspace.archiveDays, intervalMs: 0, logger }).sweep();
    if (result === null) {
      console.error('A worker is sweeping, or swept less than DATAAGENT_WORKSPACE_ARCHIVE_INTERVAL_SECONDS ago; nothing done.');
      return 1;
    }
    return 0;
  } finally {
    await redis.quit().catch(() => undefined);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : `archiving workspaces failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  },
);
