/** Types of run-view.js for its spec (the UI itself is plain JavaScript, served as it is). */
export interface ToolBlock {
  kind: 'tool';
  id: string;
  name: string;
  args: Record<string, unknown>;
  status: string;
  result: unknown;
  content: unknown;
  awaitingApproval?: boolean;
}
export type Block =
  | { kind: 'text'; text: string }
  | ToolBlock
  | { kind: 'diff'; operation: string; path: string; diff: string; stats: { additions: number; deletions: number } }
  | { kind: 'todos'; todos: Array<{ content: string; status: string }> }
  | { kind: 'error'; message: string; code: string | null; recoverable: boolean; continues: boolean };
export interface ApprovalQuestion {
  requestId: string;
  toolCallId: string | null;
  action: { name: string; args: Record<string, unknown>; description?: string };
  expiresAt: string | null;
  answered: boolean;
}
export interface Turn {
  runId: string;
  sessionId: string;
  status: 'streaming' | 'done' | 'cancelled' | 'failed';
  started: boolean;
  reason: string | null;
  lastSeq: number;
  events: Array<Record<string, unknown>>;
  blocks: Block[];
  hitl: ApprovalQuestion[];
}
export type HistoryItem = { kind: 'user'; key: string; text: string; runId: string | null } | { kind: 'turn'; key: string; turn: Turn };

export function newTurn(runId: string, sessionId: string): Turn;
export function applyEvent(turn: Turn, event: Record<string, unknown> & { seq: number; event_type: string }): 'applied' | 'duplicate' | 'gap';
export function foldEvents(runId: string, sessionId: string, events: Array<Record<string, unknown> & { seq: number; event_type: string }>): Turn;
export function pendingApprovals(turn: Turn): ApprovalQuestion[];
export function historyItems(messages: Array<Record<string, unknown>>, liveRunIds?: Set<string>): HistoryItem[];
export function shortArgs(args: unknown, max?: number): string;
export function diffLines(diff: string): Array<{ kind: 'add' | 'del' | 'hunk' | 'meta' | 'context'; text: string }>;
