import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { LlmConfig, WorkerConfig } from '#core/config/settings.js';
import type { ToolsConfig } from '#core/tools/tools-config.js';
import { findAssistant } from '#core/config/assistant-catalog.js';
import { AgentFactory } from '#core/engine/agent-factory.js';
import type { AgentMiddleware } from '#core/engine/agent-middleware.js';
import { NO_RUN_TOOLS } from '#core/engine/run-tools.js';
import { ToolPromptMiddleware } from '#core/engine/tool-prompt.middleware.js';
import type { EventDict } from '#core/events/execution-event.js';
import { approvalPolicy } from '#core/hitl/hitl-handler.js';
import { buildBuiltinTools } from '#core/tools/builtin/builtin-tools.js';
import type { Tool } from '#core/tools/tool.js';
import type { Caller } from '#core/auth/caller.js';
import { WorkspaceRegistry } from '#core/workspace/workspace-registry.js';
import { assistantModelName, createModel } from '#llm/create-chat-model.js';
import type { ApprovalMode } from '../hitl/approval-mode.js';
import type { Approver } from '../hitl/approver.js';
import type { Elicitor } from '../hitl/elicitor.js';
import { InteractiveApprovals } from '../hitl/interactive-approvals.js';
import { LocalElicitation } from '../hitl/local-elicitation.js';
import { nonInteractiveApprovals } from '../hitl/local-approvals.js';
import type { AgentBackend, McpReload, McpServerLine, SessionSummary } from './agent-backend.js';
import type { LocalMcp } from './local-mcp.js';
import { SessionFiles } from './session-files.js';
import { UnknownAssistantError } from './usage-errors.js';

export { UnknownAssistantError };

/** The one person a local CLI works for: their workspace is `<home>/workspaces/local`. */
const LOCAL_CALLER: Caller = { tenantId: 'local', userId: 'local', role: 'user' };

export interface LocalSettings {
  llm: LlmConfig;
  tools: ToolsConfig;
  worker: WorkerConfig;
}

export interface LocalOptions {
  /** Sessions and workspaces live below it ($DATAAGENT_CLI_HOME, default ~/.dataagent). */
  home: string;
  assistantId: string;
  /** A fixed answer without a terminal (`-p`), or the person asked through the interactive UI. */
  approvals: ApprovalMode | Approver;
  /** The person asked what an MCP server wants to know (interactive); absent: servers are not offered elicitation. */
  elicit?: Elicitor;
  /** Continue this session; default a new one. */
  resume?: string;
  /** MCP servers whose tools each run gets; closed with the backend. */
  mcp?: LocalMcp;
}


/**
 * The agent in the CLI's own process, so the CLI works with no server: the worker's assistant and
 * built-in tools on libs/core, with no Redis or MySQL; the history is kept in session files.
 */
export class LocalBackend implements AgentBackend {
  private readonly files: SessionFiles;
  private readonly factory: AgentFactory;
  private readonly tools: Tool[];
  private readonly middleware: AgentMiddleware[];
  sessionId: string | undefined;

  /**
   * @throws UnknownAssistantError for an unknown assistant; Error naming the missing variable
   *   when the model's provider has no key.
   */
  constructor(settings: LocalSettings, private readonly options: LocalOptions) {
    const assistant = findAssistant(options.assistantId);
    if (!assistant) throw new UnknownAssistantError(`unknown assistant: ${options.assistantId}`);
    const { llm, tools, worker } = settings;
    const workspaces = new WorkspaceRegistry({ rootTemplate: join(options.home, 'workspaces', '{user_id}') });
    const middleware: AgentMiddleware[] = worker.toolPrompt ? [new ToolPromptMiddleware()] : [];
    this.tools = buildBuiltinTools(tools, workspaces.forCaller.bind(workspaces));
    this.middleware = middleware;
    this.factory = new AgentFactory([
      {
        ...assistant,
        model: createModel(assistantModelName(assistant, llm), llm),
        maxIterations: worker.maxIterations,
        maxToolCallsPerTurn: worker.maxToolCallsPerTurn,
        approvalPolicy: approvalPolicy(worker.hitlTools),
        hitl: typeof options.approvals === 'function' ? new InteractiveApprovals(options.approvals) : nonInteractiveApprovals(options.approvals),
        ...(options.elicit ? { elicitation: new LocalElicitation(options.elicit, worker.elicitationTimeoutSeconds * 1000) } : {}),
        tools: this.tools,
        toolTimeoutMs: tools.toolTimeoutMs,
        toolResultMaxBytes: tools.toolResultMaxBytes,
        enableToolActionParsing: worker.enableToolActionParsing,
        enableJsonToolCalls: worker.enableJsonToolCalls,
        middleware,
      },
    ]);
    this.files = new SessionFiles(join(options.home, 'sessions'));
    this.sessionId = options.resume;
  }

  /** @throws UnknownSessionError when the resumed session has no file. */
  async *run(message: string, signal: AbortSignal): AsyncIterable<EventDict> {
    const sessionId = (this.sessionId ??= randomUUID());
    const history = this.options.resume === sessionId ? this.files.history(sessionId) : [];
    this.options.resume = sessionId;
    this.files.append(sessionId, { role: 'user', content: message });
    const runId = randomUUID();
    const { mcp, assistantId } = this.options;
    const equipped = mcp ? await mcp.provider({ caller: LOCAL_CALLER, runId, sessionId, assistantId, signal }) : NO_RUN_TOOLS;
    try {
      // As in the worker: the run's MCP middleware (injection) before the tool prompt describes the tools.
      const executor = this.factory.create(assistantId, { tools: [...this.tools, ...equipped.tools], middleware: [...equipped.middleware, ...this.middleware] });
      let seq = 0;
      const events = executor.execute(message, sessionId, {
        runId,
        caller: LOCAL_CALLER,
        history,
        signal,
        onMessage: (m) => this.files.append(sessionId, m),
      });
      for await (const event of events) {
        // No event log numbers them here; clients of --json still get an ordered seq.
        event.seq = ++seq;
        yield event.toDict();
      }
    } finally {
      await equipped.release();
    }
  }

  newSession(): void {
    this.sessionId = undefined;
  }

  /** @throws UnknownSessionError when the session has no file. */
  async resume(sessionId: string): Promise<void> {
    this.files.history(sessionId);
    this.sessionId = this.options.resume = sessionId;
  }

  async sessions(): Promise<SessionSummary[]> {
    return this.files.list();
  }

  async mcpServers(): Promise<McpServerLine[]> {
    return this.options.mcp?.status() ?? [];
  }

  /** @throws McpConfigFileError when the file cannot be read; Error when no file was configured. */
  async reloadMcp(): Promise<McpReload> {
    if (!this.options.mcp) throw new Error('no MCP config: start with --mcp-config PATH or create ~/.deepagents/<assistant>/mcp.json');
    return this.options.mcp.reload();
  }

  /** Signs in to an OAuth MCP server through the browser (loopback redirect), then connects it. */
  async signInMcp(name: string, print: (line: string) => void): Promise<McpServerLine> {
    if (!this.options.mcp) throw new Error('no MCP config: start with --mcp-config PATH or create ~/.deepagents/<assistant>/mcp.json');
    return this.options.mcp.signIn(name, print);
  }

  /** Closes the MCP connections and stops their stdio servers. */
  async close(): Promise<void> {
    await this.options.mcp?.close();
  }
}
