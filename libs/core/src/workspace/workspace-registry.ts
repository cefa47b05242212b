import type { Caller } from '../auth/caller.js';
import { DEFAULT_WORKSPACE_ROOT, Workspace, workspaceRootFor, type WorkspaceOptions } from './workspace.js';

/**
 * Hands out one {@link Workspace} per root directory, so a user's usage cache and write
 * lock are shared by every run in the process. Pass `forCaller` to `createFileTools`.
 */
export class WorkspaceRegistry {
  private readonly workspaces = new Map<string, Workspace>();

  /**
   * @param quotaFor A tenant's own quota in bytes (asked at each write); default `options.quotaBytes` for everyone.
   * @param ownerFor The OS user that owns a user's workspace (the sandbox's user of a root worker); default the worker's.
   */
  constructor(
    private readonly options: WorkspaceOptions = {},
    private readonly quotaFor?: (tenantId: string) => number,
    private readonly ownerFor?: (tenantId: string, userId: string) => { uid: number; gid: number } | undefined,
  ) {}

  /** The workspace of the caller's user (and tenant, when the root template names it). */
  forCaller(caller: Pick<Caller, 'tenantId' | 'userId'>): Workspace {
    const root = workspaceRootFor(this.options.rootTemplate ?? DEFAULT_WORKSPACE_ROOT, caller.userId, caller.tenantId);
    let workspace = this.workspaces.get(root);
    if (!workspace) {
      const { quotaFor } = this;
      const tenantId = caller.tenantId;
      const owner = this.ownerFor?.(tenantId, caller.userId);
      workspace = new Workspace(caller.userId, { ...this.options, tenantId, ...(quotaFor ? { quotaBytes: () => quotaFor(tenantId) } : {}), ...(owner ? { owner } : {}) });
      this.workspaces.set(root, workspace);
    }
    return workspace;
  }
}
