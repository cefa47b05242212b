import { MemoryMcpOAuthStore } from '../mcp/mcp-oauth-store.js';
import { randomUUID } from 'node:crypto';
import { ACTIVE_RUN_STATES, fromStates, type RunState } from '../run/run-state.js';
import type { EventDict } from '../events/execution-event.js';
import { MemoryApiKeyStore } from '../auth/managed-api-keys.js';
import { MemoryTenantStore } from '../tenants/tenant.js';
import { MemoryBudgetStore } from '../usage/budget.js';
import { MemoryMcpCatalogStore } from '../mcp/memory-mcp-catalog-store.js';
import { MemoryMcpServerStore } from '../mcp/memory-mcp-server-store.js';
import { MemoryToolBindingStore } from '../mcp/tool-bindings.js';
import { MemoryToolCallAuditStore } from '../mcp/tool-call-audit.js';
import { MapMemoryStore } from '../memory/map-memory-store.js';
import type { MemoryStoreOptions } from '../memory/memory-store.js';
import type { SecretCipher } from '../secrets/secret-cipher.js';
import { MemoryPriceStore } from '../usage/price-store.js';
import { MemoryUsageStore, usageFactsOf } from '../usage/usage-store.js';
import type {
  ConversationStore,
  MessageRecord,
  MessageStore,
  NewMessage,
  NewSession,
  Page,
  RunEventArchive,
  RunRecord,
  RunStore,
  SessionRecord,
  SessionStore,
  SubmissionStore,
} from './session-store.js';

/** In-process store for a single process and unit tests (DATAAGENT_SESSION_STORE=memory). */
export class MemoryConversationStore implements ConversationStore {
  private readonly sessionMap = new Map<string, SessionRecord>();
  private readonly messageMap = new Map<string, MessageRecord[]>();
  private readonly runMap = new Map<string, RunRecord>();
  private readonly eventMap = new Map<string, EventDict[]>();

  readonly mcpServers: MemoryMcpServerStore;
  readonly mcpOAuth = new MemoryMcpOAuthStore();
  readonly mcpCatalog: MemoryMcpCatalogStore;
  readonly toolBindings: MemoryToolBindingStore;
  readonly memories: MapMemoryStore;
  readonly toolCalls = new MemoryToolCallAuditStore();
  readonly apiKeys = new MemoryApiKeyStore();
  readonly tenants = new MemoryTenantStore();
  readonly usage = new MemoryUsageStore();
  readonly prices = new MemoryPriceStore();
  readonly budgets = new MemoryBudgetStore();

  /**
   * @param cipher Encrypts MCP servers' secret values; without it, servers with secrets are refused.
   * @param memory Retention and note length of long-term memory.
   */
  constructor(
    private readonly now: () => Date = () => new Date(),
    cipher?: SecretCipher,
    memory: MemoryStoreOptions = {},
  ) {
    this.mcpServers = new MemoryMcpServerStore(now, cipher);
    this.mcpCatalog = new MemoryMcpCatalogStore(now);
    this.toolBindings = new MemoryToolBindingStore(now);
    this.memories = new MapMemoryStore(now, memory);
  }

  readonly sessions: SessionStore = {
    create: async (input: NewSession) => {
      const at = this.now();
      const record: SessionRecord = {
        sessionId: input.sessionId ?? randomUUID(),
        tenantId: input.tenantId,
        userId: input.userId,
        assistantId: input.assistantId,
        title: input.title ?? '',
        metadata: input.metadata ?? {},
        createdAt: at,
        updatedAt: at,
        lastActiveAt: at,
        ...(input.ephemeral ? { ephemeral: true } : {}),
      };
      this.sessionMap.set(record.sessionId, record);
      return { ...record };
    },
    get: async (id) => {
      const s = this.sessionMap.get(id);
      return s ? { ...s } : null;
    },
    update: async (id, patch) => {
      const s = this.sessionMap.get(id);
      if (!s) return null;
      Object.assign(s, patch, { updatedAt: this.now() });
      return { ...s };
    },
    delete: async (id) => {
      const existed = this.sessionMap.delete(id);
      this.messageMap.delete(id);
      for (const [runId, run] of this.runMap) {
        if (run.sessionId === id) {
          this.runMap.delete(runId);
          this.eventMap.delete(runId);
        }
      }
      return existed;
    },
    listByUser: async (tenantId, userId, page) =>
      this.page(
        [...this.sessionMap.values()].filter((s) => s.tenantId === tenantId && s.userId === userId),
        page,
      ),
    listByAssistant: async (tenantId, assistantId, page) =>
      this.page(
        [...this.sessionMap.values()].filter((s) => s.tenantId === tenantId && s.assistantId === assistantId),
        page,
      ),
    cleanupExpired: async (timeoutSeconds, ephemeralTimeoutSeconds) => {
      const cutoff = this.now().getTime() - timeoutSeconds * 1000;
      const ephemeralCutoff = ephemeralTimeoutSeconds === undefined ? -Infinity : this.now().getTime() - ephemeralTimeoutSeconds * 1000;
      const running = (sessionId: string) => [...this.runMap.values()].some((r) => r.sessionId === sessionId && isActive(r.status));
      let removed = 0;
      const owners = new Map<string, { tenantId: string; userId: string }>();
      for (const s of [...this.sessionMap.values()]) {
        const expired = s.lastActiveAt.getTime() < cutoff || (s.ephemeral === true && s.lastActiveAt.getTime() < ephemeralCutoff && !running(s.sessionId));
        if (expired && (await this.sessions.delete(s.sessionId))) {
          removed++;
          owners.set(JSON.stringify([s.tenantId, s.userId]), { tenantId: s.tenantId, userId: s.userId });
        }
      }
      return { removed, owners: [...owners.values()] };
    },
  };

  readonly messages: MessageStore = {
    append: async (messages: NewMessage[]) => {
      const stored = messages.map((m) => ({ ...m, messageId: m.messageId ?? randomUUID(), createdAt: m.createdAt ?? this.now() }));
      for (const m of stored) {
        const list = this.messageMap.get(m.sessionId) ?? [];
        list.push(m);
        this.messageMap.set(m.sessionId, list);
      }
      return stored;
    },
    list: async (sessionId, page) => (this.messageMap.get(sessionId) ?? []).slice(page.offset, page.offset + page.limit),
    count: async (sessionId) => (this.messageMap.get(sessionId) ?? []).length,
  };

  readonly submissions: SubmissionStore = {
    writeMany: async (submissions) => {
      // All or none: refuse a batch with an id already taken before writing anything.
      for (const s of submissions) {
        if (s.session && this.sessionMap.has(s.session.sessionId)) throw new Error(`duplicate session ${s.session.sessionId}`);
        if (this.runMap.has(s.run.runId)) throw new Error(`duplicate run ${s.run.runId}`);
      }
      for (const s of submissions) {
        if (s.session) await this.sessions.create(s.session);
        if (s.touchSessionId) await this.sessions.update(s.touchSessionId, { lastActiveAt: this.now() });
        await this.runs.create(s.run);
        await this.messages.append(s.messages);
      }
    },
    startMany: async (runIds) => {
      for (const runId of runIds) await this.runs.markStarted(runId);
    },
    finishMany: async (finishes) => {
      // All or none: a message id already taken fails the batch before anything is written.
      const taken = new Set([...this.messageMap.values()].flat().map((m) => m.messageId));
      for (const f of finishes) for (const m of f.messages) if (m.messageId && taken.has(m.messageId)) throw new Error(`duplicate message ${m.messageId}`);
      for (const f of finishes) {
        await this.messages.append(f.messages);
        await this.runs.markFinished(f.runId, f.status, f.error);
        await this.sessions.update(f.sessionId, { lastActiveAt: this.now() });
      }
    },
  };

  readonly runs: RunStore = {
    create: async (run) => {
      const record: RunRecord = { ...run, status: 'queued', error: null, createdAt: this.now(), startedAt: null, finishedAt: null };
      this.runMap.set(run.runId, record);
      return { ...record };
    },
    get: async (runId) => {
      const r = this.runMap.get(runId);
      return r ? { ...r } : null;
    },
    markStarted: async (runId) => {
      const r = this.runMap.get(runId);
      if (r && fromStates('running').includes(r.status)) Object.assign(r, { status: 'running', startedAt: r.startedAt ?? this.now() });
    },
    markWaiting: async (runId) => {
      const r = this.runMap.get(runId);
      if (!r || !fromStates('waiting').includes(r.status)) return false;
      r.status = 'waiting';
      return true;
    },
    markFinished: async (runId, status, error, from = fromStates(status)) => {
      const r = this.runMap.get(runId);
      if (!r || !from.includes(r.status)) return false;
      Object.assign(r, { status, error: error ?? null, finishedAt: this.now() });
      return true;
    },
    listActive: async (sessionId) =>
      [...this.runMap.values()].filter((r) => r.sessionId === sessionId && isActive(r.status)).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()),
    activeAmong: async (runIds) => new Set(runIds.filter((id) => isActive(this.runMap.get(id)?.status))),
    listStale: async (before, limit) =>
      [...this.runMap.values()]
        .filter((r) => isActive(r.status) && r.createdAt.getTime() < before.getTime())
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
        .slice(0, limit)
        .map((r) => ({ ...r })),
    purgeIfOrphaned: async (runId, sessionId) => {
      if (this.sessionMap.has(sessionId)) return false;
      this.runMap.delete(runId);
      this.eventMap.delete(runId);
      const left = (this.messageMap.get(sessionId) ?? []).filter((m) => m.runId !== runId);
      if (left.length > 0) this.messageMap.set(sessionId, left);
      else this.messageMap.delete(sessionId);
      return true;
    },
  };

  readonly events: RunEventArchive = {
    appendBatch: async (runId, events) => {
      const list = this.eventMap.get(runId) ?? [];
      const last = list.at(-1)?.seq ?? 0;
      list.push(...events.filter((e) => e.seq > last));
      this.eventMap.set(runId, list);
      const run = this.runMap.get(runId);
      if (run) await this.usage.record(usageFactsOf(runId, events, run));
    },
    appendMany: async (batches) => {
      for (const b of batches) await this.events.appendBatch(b.runId, b.events);
    },
    list: async (runId, afterSeq) => (this.eventMap.get(runId) ?? []).filter((e) => e.seq > afterSeq),
  };

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}

  private page(list: SessionRecord[], page: Page): SessionRecord[] {
    return list
      .sort((a, b) => b.lastActiveAt.getTime() - a.lastActiveAt.getTime())
      .slice(page.offset, page.offset + page.limit)
      .map((s) => ({ ...s }));
  }
}

function isActive(status: RunState | undefined): boolean {
  return status !== undefined && ACTIVE_RUN_STATES.includes(status);
}
