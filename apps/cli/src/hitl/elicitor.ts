import type { ElicitationMode } from '#core/events/execution-event.js';
import type { ElicitationAnswer } from '#core/hitl/elicitation.js';

/** An MCP server's question to the person during a tool call, as the terminal shows it. */
export interface ElicitationQuestion {
  requestId: string;
  server: string;
  mode: ElicitationMode;
  message: string;
  /** A form's schema (form mode). */
  schema?: Record<string, unknown>;
  /** The page to open (URL mode). */
  url?: string;
  /** Why the last answer was refused, field by field: the person is asked again. */
  problems?: Record<string, string[]>;
}

/**
 * Asks the person at the terminal (the interactive UI). Resolves to their answer; an aborted
 * `signal` (the run was cancelled, or the question ended elsewhere) resolves to `cancel`.
 */
export type Elicitor = (question: ElicitationQuestion, signal: AbortSignal) => Promise<ElicitationAnswer>;
