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

/** A write that would take the workspace past its quota. */
export class WorkspaceQuotaError extends WorkspaceError {
  constructor(readonly usedBytes: number, readonly quotaBytes: number, readonly requestedBytes: number) {
    super(
      'workspace_quota_exceeded',
      `Workspace quota exceeded: ${usedBytes} of ${quotaBytes} bytes used, a write adding ${requestedBytes} bytes was refused. Delete files to free space.`,
    );
  }
}
