/** Why a server could not be reached, in words a person (or the model) can act on. */
export class McpUnavailableError extends Error {
  constructor(
    readonly server: string,
    readonly reason: string,
    /** Whether trying again later may help (a timeout, a restart) or not (401, a bad command). */
    readonly retryable: boolean,
  ) {
    super(`MCP server ${server} is unavailable: ${reason}`);
    this.name = 'McpUnavailableError';
  }
}

/**
 * The server wants the person to sign in (again): nobody has, the sign-in was revoked or
 * expired with no refresh, or the server asks for more scope than was granted. Waiting does not
 * help; the person signing in does.
 */
export class McpAuthorizationRequired extends McpUnavailableError {
  constructor(
    server: string,
    readonly detail: string,
    /** What the server's challenge asked for, for the next sign-in. */
    readonly challenge: { scope?: string; resourceMetadataUrl?: string } = {},
  ) {
    super(server, `it needs sign-in: ${detail}`, false);
    this.name = 'McpAuthorizationRequired';
  }
}
