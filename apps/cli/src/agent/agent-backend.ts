import type { EventDict } from '#core/events/execution-event.js';

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
  close(): Promise<void>;
}
