import { AGENT_DEFAULTS, type AgentConfig } from './agent-config.js';
import { AgentExecutor } from './agent-executor.js';

export type AgentDefinition = Pick<AgentConfig, 'id' | 'name' | 'description' | 'systemPrompt' | 'model'> & Partial<AgentConfig>;

/** Builds executors from agent definitions, filling in defaults. */
export class AgentFactory {
  private readonly agents = new Map<string, AgentConfig>();

  constructor(definitions: AgentDefinition[] = []) {
    for (const d of definitions) this.register(d);
  }

  register(definition: AgentDefinition): AgentConfig {
    const config: AgentConfig = { tools: [], middleware: [], ...AGENT_DEFAULTS, ...definition };
    this.agents.set(config.id, config);
    return config;
  }

  has(id: string): boolean {
    return this.agents.has(id);
  }

  get(id: string): AgentConfig | undefined {
    return this.agents.get(id);
  }

  list(): AgentConfig[] {
    return [...this.agents.values()];
  }

  /** @throws Error when no agent has that id. */
  create(id: string, overrides: Partial<AgentConfig> = {}): AgentExecutor {
    const config = this.agents.get(id);
    if (!config) throw new Error(`Unknown assistant: ${id}`);
    return new AgentExecutor({ ...config, ...overrides });
  }
}
