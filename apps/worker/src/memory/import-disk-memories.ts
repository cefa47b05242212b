import type { Logger } from 'pino';
import { importFileMemories } from '#core/memory/file-memory-import.js';
import type { MemoryStore } from '#core/memory/memory-store.js';

/**
 * Moves the notes earlier versions kept under DATAAGENT_STORAGE_ROOT into the store, before the
 * worker takes runs, so an upgrade loses none. A failure is logged, never fatal: what was not
 * moved stays on disk for the next start.
 */
export async function importDiskMemories(storageRoot: string, memories: MemoryStore, logger: Logger): Promise<void> {
  try {
    const { notes, users, skipped } = await importFileMemories(storageRoot, memories);
    if (users > 0) logger.info({ notes, users, storage_root: storageRoot }, 'memory notes moved from disk into the database');
    if (skipped.length > 0) logger.warn({ folders: skipped }, 'memory folders left on disk: their names do not give the ids back');
  } catch (err) {
    logger.error({ err, storage_root: storageRoot }, 'moving memory notes from disk failed; what is left stays there for the next start');
  }
}
