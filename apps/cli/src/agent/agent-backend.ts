import type { EventDict } from '#core/events/execution-event.js';

/** An earlier session, as `/sessions` lists it. */
export interface SessionSummary {
  id: string;
  /** Its first question (or the gateway's title). */
  title: string;
  updatedAt: Date;
}

/** A server as `/mcp list` shows it, in either mode. */
export interface McpServerLine {
  name: string;
  /** `connected`, `failed`, or the gateway's status words (`error`, `unknown`, ...). */
  status: string;
  tools?: number | null;
  reason?: string | null;
}

/** What `/mcp reload` changed (local mode). */
export interface McpReload {
  added: string[];
  removed: string[];
  failed: string[];
}

/**
 * Where a run happens: in this process (local mode) or on a gateway (remote mode). Both yield
 * the same event dicts, so one renderer serves both.
 */
export interface AgentBackend {
  /**
   * Runs one message in the session and yields its events, ending with `done`.
   * Aborting `signal` cancels the run; the events still end with `done`.
   */
  run(message: string, signal: AbortSignal): AsyncIterable<EventDict>;
  /** The session the next message continues (set once the first run has one). */
  readonly sessionId: string | undefined;
  /** The next message starts a new session. */
  newSession(): void;
  /**
   * The next message continues `sessionId`.
   * @throws UnknownSessionError (local) or GatewayError (remote) when there is no such session.
   */
  resume(sessionId: string): Promise<void>;
  /** Earlier sessions, most recent first. */
  sessions(): Promise<SessionSummary[]>;
  /** The MCP servers and their status: the CLI's own (local) or the gateway's (remote). */
  mcpServers(): Promise<McpServerLine[]>;
  /**
   * Re-reads the MCP config and connects what is new (local mode only: a gateway's servers are
   * managed on the gateway).
   */
  reloadMcp?(): Promise<McpReload>;
  /** Local mode: signs in to an OAuth MCP server through the browser, then connects it. */
  signInMcp?(name: string, print: (line: string) => void): Promise<McpServerLine>;
  close(): Promise<void>;
}
