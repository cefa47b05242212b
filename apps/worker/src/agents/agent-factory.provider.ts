import { BUILTIN_ASSISTANTS } from '#core/config/assistant-catalog.js';
import { AgentFactory } from '#core/engine/agent-factory.js';
import type { AgentMiddleware } from '#core/engine/agent-middleware.js';
import { ToolPromptMiddleware } from '#core/engine/tool-prompt.middleware.js';
import type { ApprovalPolicy } from '#core/hitl/hitl-handler.js';
import { SkillCatalog } from '#core/skills/skill-catalog.js';
import { createSkillTools } from '#core/skills/skill-tools.js';
import { SkillsMiddleware } from '#core/skills/skills-middleware.js';
import { SkillsSandboxExecutor } from '#core/skills/skills-sandbox-executor.js';
import type { WorkspaceRegistry } from '#core/workspace/workspace-registry.js';
import { SandboxError, type Sandbox } from '#core/sandbox/sandbox.js';
import type { SandboxChoice } from '#core/sandbox/sandbox-setup.js';
import type { ChatModel } from '#core/llm/chat-model.js';
import { assistantModelName, createModel } from '#llm/create-chat-model.js';
import type { WorkerSettings } from '../infra/worker-config.js';
import { buildBuiltinTools } from '#core/tools/builtin/builtin-tools.js';

/**
 * The worker's assistants: the built-in catalog, each on its own model (DATAAGENT_MODEL unless it
 * names another), with the built-in tools and the skills found in DATAAGENT_SKILLS_DIR. Per-run
 * parts (memory, HITL) are added by the run runner.
 */
/** @param place The worker's workspaces, and the sandbox shell commands and skill scripts run in. */
export async function buildAgentFactory(settings: WorkerSettings, policy: ApprovalPolicy | undefined, warn: (msg: string) => void, place: { workspaces: WorkspaceRegistry; sandbox: SandboxChoice }): Promise<AgentFactory> {
  const { llm, worker, tools, storage } = settings;
  // Assistants that name the same model share one client.
  const models = new Map<string, ChatModel>();
  const modelOf = (name: string) => models.get(name) ?? models.set(name, createModel(name, llm)).get(name)!;
  const workspaceFor = place.workspaces.forCaller.bind(place.workspaces);
  const { sandbox } = place.sandbox;
  // Multi-tenant with no sandbox: a skill's script would run as the worker, so none runs.
  const scripts: Sandbox =
    sandbox.kind === 'none' && settings.tenancy.multiTenant
      ? {
          kind: 'none',
          spawn: () => {
            throw new SandboxError('refused', `skill scripts run only in the sandbox in multi-tenant mode, and this worker has none (${place.sandbox.reason ?? 'DATAAGENT_SANDBOX=none'})`);
          },
        }
      : sandbox;
  const skills = await SkillCatalog.load(storage.skillsDir);
  for (const warning of skills.warnings) warn(warning);
  const middleware: AgentMiddleware[] = [];
  if (skills.list().length > 0) middleware.push(new SkillsMiddleware(skills));
  if (worker.toolPrompt) middleware.push(new ToolPromptMiddleware());
  const allTools = [
    ...buildBuiltinTools(tools, workspaceFor, sandbox),
    ...(skills.list().length > 0 ? createSkillTools(skills, new SkillsSandboxExecutor({ timeoutMs: tools.toolTimeoutMs, sandbox: scripts }), workspaceFor) : []),
  ];
  return new AgentFactory(
    BUILTIN_ASSISTANTS.map((a) => ({
      ...a,
      model: modelOf(assistantModelName(a, llm)),
      maxIterations: worker.maxIterations,
      maxToolCallsPerTurn: worker.maxToolCallsPerTurn,
      ...(worker.maxRunTokens > 0 ? { maxRunTokens: worker.maxRunTokens } : {}),
      defaultMaxOutputTokens: llm.maxTokens,
      textCoalesceMs: worker.textCoalesceMs,
      approvalPolicy: policy,
      tools: allTools,
      toolTimeoutMs: tools.toolTimeoutMs,
      toolResultMaxBytes: tools.toolResultMaxBytes,
      enableToolActionParsing: worker.enableToolActionParsing,
      enableJsonToolCalls: worker.enableJsonToolCalls,
      middleware,
    })),
  );
}
