/** Types of run-view.js for its spec (the UI itself is plain JavaScript, served as it is). */
import type { ActionRequest, ElicitationAction, ElicitationMode, EventDict, TodoItem, ToolResultStatus } from './events.js';

export interface ToolBlock {
  kind: 'tool';
  id: string;
  name: string;
  args: Record<string, unknown>;
  status: ToolResultStatus | 'running';
  result: unknown;
  content: unknown;
  awaitingApproval?: boolean;
  /** An MCP server asked the person something during the call and waits for the answer. */
  awaitingInput?: boolean;
}
export type Block =
  | { kind: 'text'; text: string }
  | ToolBlock
  | { kind: 'diff'; operation: string; path: string; diff: string; stats: { additions: number; deletions: number } }
  | { kind: 'todos'; todos: TodoItem[] }
  | { kind: 'error'; message: string; code: string | null; recoverable: boolean; continues: boolean };
export interface ApprovalQuestion {
  requestId: string;
  toolCallId: string | null;
  action: ActionRequest;
  expiresAt: string | null;
  answered: boolean;
}
/** An MCP server's question (elicitation_request) and, once it ended, how (elicitation). */
export interface ElicitationQuestion {
  requestId: string;
  toolCallId: string;
  server: string;
  mode: ElicitationMode;
  message: string;
  schema: Record<string, unknown> | null;
  url: string | null;
  expiresAt: string | null;
  answered: boolean;
  outcome: { action: ElicitationAction; content: Record<string, unknown> | null; reason: string | null } | null;
}
export interface Turn {
  runId: string;
  sessionId: string;
  status: 'streaming' | 'done' | 'cancelled' | 'failed';
  started: boolean;
  reason: string | null;
  /** Set by a non-recoverable error: the run's done then shows it failed. */
  failed?: boolean;
  lastSeq: number;
  events: EventDict[];
  blocks: Block[];
  hitl: ApprovalQuestion[];
  elicitations: ElicitationQuestion[];
  /** The run's model calls so far (summed from its usage events; its done's total once it ends). */
  usage: TurnUsage | null;
}
export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  /** Exact decimal, when any call was priced. */
  cost: string | null;
  currency: string | null;
  estimated: boolean;
}
/** "1,234 tokens · 0.0023 USD" (cost to 4 decimals, ~ when estimated); null when nothing was counted. */
export function usageLine(usage: TurnUsage | null): string | null;
export type HistoryItem = { kind: 'user'; key: string; text: string; runId: string | null } | { kind: 'turn'; key: string; turn: Turn };

export function newTurn(runId: string, sessionId: string): Turn;
export function applyEvent(turn: Turn, event: EventDict): 'applied' | 'duplicate' | 'gap';
export function foldEvents(runId: string, sessionId: string, events: EventDict[]): Turn;
export function pendingApprovals(turn: Turn): ApprovalQuestion[];
export function pendingElicitations(turn: Turn): ElicitationQuestion[];
export function historyItems(messages: Array<Record<string, unknown>>, liveRunIds?: Set<string>): HistoryItem[];
export function shortArgs(args: unknown, max?: number): string;
export function diffLines(diff: string): Array<{ kind: 'add' | 'del' | 'hunk' | 'meta' | 'context'; text: string }>;
