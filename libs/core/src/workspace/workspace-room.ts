import type { Workspace } from './workspace.js';

/**
 * Bytes a command may still add to the workspace: its quota less a fresh count of what it holds
 * (a command before may have written around the file tools), never below 0. The sandbox makes it
 * the command's largest file (RLIMIT_FSIZE), so a workspace at its quota takes no more bytes.
 */
export async function writeRoom(workspace: Workspace): Promise<number> {
  workspace.invalidateUsage();
  return Math.max(0, workspace.quotaBytes - (await workspace.usage()));
}
