import type { Caller } from '../session/caller.js';
import { DEFAULT_WORKSPACE_ROOT, Workspace, workspaceRootFor, type WorkspaceOptions } from './workspace.js';

/**
 * Hands out one {@link Workspace} per root directory, so a user's usage cache and write
 * lock are shared by every run in the process. Pass `forCaller` to `createFileTools`.
 */
export class WorkspaceRegistry {
  private readonly workspaces = new Map<string, Workspace>();

  constructor(private readonly options: WorkspaceOptions = {}) {}

  /** The workspace of the caller's user (and tenant, when the root template names it). */
  forCaller(caller: Pick<Caller, 'tenantId' | 'userId'>): Workspace {
    const root = workspaceRootFor(this.options.rootTemplate ?? DEFAULT_WORKSPACE_ROOT, caller.userId, caller.tenantId);
    let workspace = this.workspaces.get(root);
    if (!workspace) {
      workspace = new Workspace(caller.userId, { ...this.options, tenantId: caller.tenantId });
      this.workspaces.set(root, workspace);
    }
    return workspace;
  }
}
