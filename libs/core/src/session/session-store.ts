import type { McpOAuthStore } from '../mcp/mcp-oauth-store.js';
import type { FinalRunState, RunState } from '../run/run-state.js';
import type { ChatRole } from '../llm/chat-model.js';
import type { ApiKeyStore } from '../auth/managed-api-keys.js';
import type { MemoryStore } from '../memory/memory-store.js';
import type { TenantStore } from '../tenants/tenant.js';
import type { BudgetStore } from '../usage/budget.js';
import type { McpCatalogStore } from '../mcp/mcp-catalog-store.js';
import type { McpServerStore } from '../mcp/mcp-server-store.js';
import type { ToolBindingStore } from '../mcp/tool-bindings.js';
import type { ToolCallAuditStore } from '../mcp/tool-call-audit.js';
import type { PriceStore } from '../usage/price-store.js';
import type { UsageStore } from '../usage/usage-store.js';

export interface SessionRecord {
  sessionId: string;
  tenantId: string;
  userId: string;
  assistantId: string;
  title: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  lastActiveAt: Date;
  /** Goes soon after its last activity (a stateless OpenAI-compatible call's), unless a client continues it. */
  ephemeral?: boolean;
}

export interface NewSession {
  sessionId?: string;
  tenantId: string;
  userId: string;
  assistantId: string;
  title?: string;
  metadata?: Record<string, unknown>;
  ephemeral?: boolean;
}

export interface Page {
  limit: number;
  offset: number;
}

/** Sessions of users with assistants. */
export interface SessionStore {
  create(input: NewSession): Promise<SessionRecord>;
  get(sessionId: string): Promise<SessionRecord | null>;
  update(sessionId: string, patch: Partial<Pick<SessionRecord, 'title' | 'metadata' | 'lastActiveAt' | 'ephemeral'>>): Promise<SessionRecord | null>;
  /** Deletes the session with its messages and runs. Returns false when it did not exist. */
  delete(sessionId: string): Promise<boolean>;
  listByUser(tenantId: string, userId: string, page: Page): Promise<SessionRecord[]>;
  listByAssistant(tenantId: string, assistantId: string, page: Page): Promise<SessionRecord[]>;
  /**
   * Deletes sessions idle for longer than `timeoutSeconds`, and ephemeral ones idle for longer
   * than `ephemeralTimeoutSeconds` that have no run queued, running or waiting; returns how many, and whose.
   */
  cleanupExpired(timeoutSeconds: number, ephemeralTimeoutSeconds?: number): Promise<ExpiredSessions>;
}

/** What a cleanup removed. */
export interface ExpiredSessions {
  removed: number;
  /** Each user one of whose sessions was removed, once. */
  owners: Array<{ tenantId: string; userId: string }>;
}

export interface MessageRecord {
  messageId: string;
  sessionId: string;
  runId: string | null;
  role: ChatRole;
  content: string;
  /** Tool name (role tool) or native tool calls (role assistant), when any. */
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export type NewMessage = Omit<MessageRecord, 'messageId' | 'createdAt'> & { messageId?: string; createdAt?: Date };

/** The session's history, oldest first. */
export interface MessageStore {
  append(messages: NewMessage[]): Promise<MessageRecord[]>;
  list(sessionId: string, page: Page): Promise<MessageRecord[]>;
  count(sessionId: string): Promise<number>;
}

/** A run's state as its row keeps it (see run-state.ts for the moves). */
export type RunStatus = RunState;

export interface RunRecord {
  runId: string;
  sessionId: string;
  tenantId: string;
  userId: string;
  assistantId: string;
  status: RunStatus;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface RunStore {
  create(run: Pick<RunRecord, 'runId' | 'sessionId' | 'tenantId' | 'userId' | 'assistantId'>): Promise<RunRecord>;
  get(runId: string): Promise<RunRecord | null>;
  /** Marks a queued or waiting run running. */
  markStarted(runId: string): Promise<void>;
  /** Marks a running run waiting (parked for a person). Returns whether it did. */
  markWaiting(runId: string): Promise<boolean>;
  /**
   * Sets a final status when the run is in one of `from` (default: every state the table moves
   * to `status` from), by compare-and-set; returns whether it did.
   */
  markFinished(runId: string, status: FinalRunState, error?: string, from?: readonly RunState[]): Promise<boolean>;
  /** Runs of a session that are queued, running or waiting, oldest first. */
  listActive(sessionId: string): Promise<RunRecord[]>;
  /** Those of `runIds` still queued or running (slots of the concurrent-runs quota are checked against it). */
  activeAmong(runIds: readonly string[]): Promise<Set<string>>;
  /**
   * Deletes a run's row, messages and archived events when its session no longer exists (the
   * session was deleted while the run still wrote). Returns whether it did.
   */
  purgeIfOrphaned(runId: string, sessionId: string): Promise<boolean>;
  /** Runs still queued or running that were created before `before`, oldest first (the reaper's candidates). */
  listStale(before: Date, limit: number): Promise<RunRecord[]>;
}

/** The rows one chat turn writes before it is queued: a new session or the touch of an existing one, the run, and the messages before it. */
export interface NewSubmission {
  /** A session created with this turn; absent for a turn of an existing session. */
  session?: NewSession & { sessionId: string };
  /** An existing session whose `last_active_at` this turn moves. */
  touchSessionId?: string;
  run: Pick<RunRecord, 'runId' | 'sessionId' | 'tenantId' | 'userId' | 'assistantId'>;
  /** In order: earlier conversation a new session brings, then the user's message. */
  messages: NewMessage[];
}

/** The rows a run writes as it ends: its final status and the messages it added; its session's `last_active_at` moves. */
export interface RunFinish {
  runId: string;
  sessionId: string;
  status: FinalRunState;
  error?: string;
  messages: NewMessage[];
}

/**
 * Writes many turns' rows at once: the gateway's group commit of submissions, the workers' of
 * runs starting and ending. Each call is one transaction of a few statements whatever the number.
 */
export interface SubmissionStore {
  /** Writes every submission's rows, all or none. */
  writeMany(submissions: NewSubmission[]): Promise<void>;
  /** Marks queued runs running, as {@link RunStore.markStarted} does each. */
  startMany(runIds: readonly string[]): Promise<void>;
  /**
   * Ends runs, all or none: their messages, then each final status unless the run has one
   * already (as {@link RunStore.markFinished}), then their sessions' `last_active_at`.
   */
  finishMany(finishes: readonly RunFinish[]): Promise<void>;
}

/** The durable copy of run events; batched, never a row per token. */
export interface RunEventArchive {
  appendBatch(runId: string, events: import('../events/execution-event.js').EventDict[]): Promise<void>;
  /**
   * Writes one batch per run in a single statement (the worker's flushes). A batch that starts
   * where a stored one starts keeps whichever reaches further; overlapping events are
   * deduplicated by seq when read.
   */
  appendMany(batches: Array<{ runId: string; events: import('../events/execution-event.js').EventDict[] }>): Promise<void>;
  list(runId: string, afterSeq: number): Promise<import('../events/execution-event.js').EventDict[]>;
}

/** Everything the system stores about conversations. */
export interface ConversationStore {
  sessions: SessionStore;
  messages: MessageStore;
  runs: RunStore;
  /** Chat turns' rows, written together. */
  submissions: SubmissionStore;
  events: RunEventArchive;
  /** Users' own MCP servers, secret values encrypted at rest. */
  mcpServers: McpServerStore;
  /** People's sign-ins to OAuth-protected MCP servers. */
  mcpOAuth: McpOAuthStore;
  /** Each MCP server's tools, as a worker last listed them (`mcp_tools`). */
  mcpCatalog: McpCatalogStore;
  /** Which MCP tools an assistant or an API key may use (`mcp_tool_bindings`). */
  toolBindings: ToolBindingStore;
  /** Every MCP call (`mcp_tool_call_log`). */
  toolCalls: ToolCallAuditStore;
  /** API keys issued through the API (`api_keys`): hashes only. */
  apiKeys: ApiKeyStore;
  /** Tenants' limits and feature switches (`tenants`). */
  tenants: TenantStore;
  /** Tenants' and people's token and cost budgets (`budgets`). */
  budgets: BudgetStore;
  /** Users' long-term notes (`memories`), shared by every gateway and worker. */
  memories: MemoryStore;
  /** Each model call's usage (`usage_facts`), written as runs' events are archived. */
  usage: UsageStore;
  /** The price table operators set, and its changes (`model_prices`, `model_price_changes`). */
  prices: PriceStore;
  /** True when the backing database answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
