import { randomUUID } from 'node:crypto';

/**
 * An allowlist of MCP tools for one assistant (`agentId`) or one API key (`apiKeyId`) of a
 * tenant, so each gets only the tools it needs. Patterns are `server.tool`, `server.*` or `*`.
 */
export interface ToolBinding {
  bindingId: string;
  tenantId: string;
  agentId?: string;
  apiKeyId?: string;
  tools: string[];
  createdAt: Date;
}

export type NewToolBinding = Omit<ToolBinding, 'bindingId' | 'createdAt'>;

/** The tenant's tool bindings, managed by its admins. */
export interface ToolBindingStore {
  /** Oldest first. */
  list(tenantId: string): Promise<ToolBinding[]>;
  create(binding: NewToolBinding): Promise<ToolBinding>;
  /** Returns false when the tenant has no such binding. */
  delete(tenantId: string, bindingId: string): Promise<boolean>;
}

/** `*`, `server.*` or `server.tool` (server names as in mcp-config; a tool name has no white space). */
export const TOOL_PATTERN = /^(\*|[A-Za-z0-9][A-Za-z0-9_-]{0,47}\.(\*|\S{1,128}))$/;

/**
 * Which MCP tools a run may use, from the bindings that apply to it: those of its assistant and
 * those of the API key it came with. None applies: null, every tool is allowed (no binding
 * configured keeps today's behaviour). Otherwise a tool passes when any applying binding lists it.
 */
export function bindingMatcher(bindings: readonly ToolBinding[], run: { agentId: string; apiKeyId?: string }): ((toolName: string) => boolean) | null {
  const applying = bindings.filter((b) => (b.agentId !== undefined && b.agentId === run.agentId) || (b.apiKeyId !== undefined && b.apiKeyId === run.apiKeyId));
  if (applying.length === 0) return null;
  const exact = new Set<string>();
  const servers = new Set<string>();
  let all = false;
  for (const pattern of applying.flatMap((b) => b.tools)) {
    if (pattern === '*') all = true;
    else if (pattern.endsWith('.*')) servers.add(pattern.slice(0, -2));
    else exact.add(pattern);
  }
  return (toolName) => all || exact.has(toolName) || servers.has(toolName.slice(0, Math.max(0, toolName.indexOf('.'))));
}

/** Tool bindings in process memory (DATAAGENT_SESSION_STORE=memory and unit tests). */
export class MemoryToolBindingStore implements ToolBindingStore {
  private readonly bindings: ToolBinding[] = [];

  constructor(private readonly now: () => Date = () => new Date()) {}

  async list(tenantId: string): Promise<ToolBinding[]> {
    return this.bindings.filter((b) => b.tenantId === tenantId).map((b) => structuredClone(b));
  }

  async create(binding: NewToolBinding): Promise<ToolBinding> {
    const created: ToolBinding = { ...structuredClone(binding), bindingId: randomUUID(), createdAt: this.now() };
    this.bindings.push(created);
    return structuredClone(created);
  }

  async delete(tenantId: string, bindingId: string): Promise<boolean> {
    const at = this.bindings.findIndex((b) => b.tenantId === tenantId && b.bindingId === bindingId);
    if (at < 0) return false;
    this.bindings.splice(at, 1);
    return true;
  }
}
