/**
 * Which built-in tools, skills and MCP servers a tenant may use. A list names the
 * allowed ones; an absent list allows all. `shell: false` switches the shell tool off whatever
 * the list says (the deployment must also enable it: DATAAGENT_SHELL_ENABLED).
 */
export interface TenantFeatures {
  /** Built-in and memory tools by name (`read_file`, `http_request`, `remember`, ...). */
  tools?: string[];
  /** Skills by name. */
  skills?: string[];
  /** MCP servers by name, the operator's global ones and users' own alike. */
  mcp_servers?: string[];
  shell?: boolean;
}

/**
 * A tenant's limits. Each absent (null) limit falls back to the deployment's default from the
 * environment; 0 means no limit where the environment's 0 does.
 */
export interface TenantLimits {
  /** Distinct users holding live issued keys. */
  maxUsers: number | null;
  maxSessionsPerUser: number | null;
  /** A user's own MCP servers. */
  maxMcpServers: number | null;
  /** Bytes one user's workspace may hold. */
  workspaceQuotaBytes: number | null;
  /** Runs queued or running at once, over the whole tenant. */
  maxConcurrentRuns: number | null;
  /** Requests a minute per API key. */
  requestsPerMinute: number | null;
}

/** One row of `tenants`. */
export interface TenantRecord extends TenantLimits {
  tenantId: string;
  name: string;
  features: TenantFeatures;
  /** Where the tenant's days and months start (its budgets' periods): an IANA zone; absent, UTC. */
  timeZone?: string;
  createdAt: Date;
  updatedAt: Date;
}

export type TenantUpdate = Partial<Omit<TenantRecord, 'tenantId' | 'createdAt' | 'updatedAt'>>;

export class TenantExistsError extends Error {
  constructor(readonly tenantId: string) {
    super(`A tenant "${tenantId}" exists already`);
    this.name = 'TenantExistsError';
  }
}

export interface TenantStore {
  /** @throws TenantExistsError */
  create(record: TenantRecord): Promise<void>;
  get(tenantId: string): Promise<TenantRecord | null>;
  list(page: { limit: number; offset: number }): Promise<TenantRecord[]>;
  /** Returns the updated row, or null when there is none. */
  update(tenantId: string, patch: TenantUpdate, at: Date): Promise<TenantRecord | null>;
  delete(tenantId: string): Promise<boolean>;
}

/** Tenants in process memory (DATAAGENT_SESSION_STORE=memory and unit tests). */
export class MemoryTenantStore implements TenantStore {
  private readonly rows = new Map<string, TenantRecord>();

  async create(record: TenantRecord): Promise<void> {
    if (this.rows.has(record.tenantId)) throw new TenantExistsError(record.tenantId);
    this.rows.set(record.tenantId, structuredClone(record));
  }

  async get(tenantId: string): Promise<TenantRecord | null> {
    const row = this.rows.get(tenantId);
    return row ? structuredClone(row) : null;
  }

  async list(page: { limit: number; offset: number }): Promise<TenantRecord[]> {
    return [...this.rows.values()]
      .sort((a, b) => (a.tenantId < b.tenantId ? -1 : 1))
      .slice(page.offset, page.offset + page.limit)
      .map((r) => structuredClone(r));
  }

  async update(tenantId: string, patch: TenantUpdate, at: Date): Promise<TenantRecord | null> {
    const row = this.rows.get(tenantId);
    if (!row) return null;
    const updated = { ...row, ...structuredClone(patch), updatedAt: at };
    this.rows.set(tenantId, updated);
    return structuredClone(updated);
  }

  async delete(tenantId: string): Promise<boolean> {
    return this.rows.delete(tenantId);
  }
}
