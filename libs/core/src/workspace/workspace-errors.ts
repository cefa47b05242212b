/** Base of the errors a workspace raises; `code` is the error_code the API reports. */
export class WorkspaceError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A path that leaves the user's workspace (or cannot be proven not to). */
export class WorkspacePermissionError extends WorkspaceError {
  constructor(message: string) {
    super('workspace_permission_denied', message);
  }
}

/**
 * A regular file with more than one hard link. Its other names may lie anywhere on the volume
 * (a link a command in the workspace made to another tenant's file), where no path check of the
 * workspace can see them, so file tools leave it alone.
 */
export class WorkspaceHardLinkError extends WorkspacePermissionError {
  constructor(shown: string, readonly links: number) {
    super(`${shown}: has ${links} hard links; file tools refuse hard-linked files`);
  }
}

/** A write that would take the workspace past its quota. */
export class WorkspaceQuotaError extends WorkspaceError {
  constructor(readonly usedBytes: number, readonly quotaBytes: number, readonly requestedBytes: number) {
    super(
      'workspace_quota_exceeded',
      `Workspace quota exceeded: ${usedBytes} of ${quotaBytes} bytes used, a write adding ${requestedBytes} bytes was refused. Delete files to free space.`,
    );
  }
}
