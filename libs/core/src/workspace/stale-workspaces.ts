import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { inspectWorkspace, type WorkspaceFolder } from './workspace-archive.js';
import { WORKSPACE_SUBDIRS } from './workspace.js';

const PLACEHOLDER = /\{(?:tenant_id|user_id)\}/g;

const isDirectory = (p: string) => lstat(p).then((s) => s.isDirectory(), () => false);

/**
 * Every workspace folder a root template can produce: its placeholders expanded as directory
 * levels (`/data/workspaces/{tenant_id}/{user_id}` → each folder two levels below
 * `/data/workspaces`). Only folders holding `files/`, `uploads/` and `outputs/` count, so another
 * folder that happens to sit where a workspace could is never archived; archives, temporary
 * names (they start with a dot) and symlinks are left out.
 */
export async function listWorkspaceFolders(template: string): Promise<string[]> {
  const full = path.resolve(template.includes('{user_id}') ? template : path.join(template, '{user_id}'));
  let current = [path.parse(full).root];
  for (const level of full.split(path.sep).filter(Boolean)) {
    if (!level.match(PLACEHOLDER)) {
      current = current.map((dir) => path.join(dir, level));
      continue;
    }
    const pattern = new RegExp(`^${level.split(PLACEHOLDER).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);
    const next: string[] = [];
    for (const dir of current) {
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        if (entry.isDirectory() && !entry.name.startsWith('.') && pattern.test(entry.name)) next.push(path.join(dir, entry.name));
      }
    }
    current = next.sort();
  }
  const workspaces: string[] = [];
  for (const folder of current) {
    if ((await Promise.all(WORKSPACE_SUBDIRS.map((sub) => isDirectory(path.join(folder, sub))))).every(Boolean)) workspaces.push(folder);
  }
  return workspaces;
}

/**
 * The workspaces nobody changed or used for `maxAgeMs` before `now`, oldest first.
 * @param now the clock, in epoch milliseconds.
 */
export async function findStaleWorkspaces(template: string, maxAgeMs: number, now = Date.now()): Promise<WorkspaceFolder[]> {
  const stale: WorkspaceFolder[] = [];
  for (const folder of await listWorkspaceFolders(template)) {
    const seen = await inspectWorkspace(folder);
    if (seen && seen.lastModified.getTime() <= now - maxAgeMs) stale.push(seen);
  }
  return stale.sort((a, b) => a.lastModified.getTime() - b.lastModified.getTime());
}
