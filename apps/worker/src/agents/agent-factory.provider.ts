import { BUILTIN_ASSISTANTS } from '#core/engine/assistant-catalog.js';
import { AgentFactory } from '#core/engine/agent-factory.js';
import type { LlmConfig, ToolsConfig, WorkerConfig } from '#core/config/settings.js';
import { buildBuiltinTools } from './builtin-tools.js';
import type { ApprovalPolicy } from '#core/hitl/hitl-handler.js';
import { ToolPromptMiddleware } from '#core/engine/tool-prompt.middleware.js';
import { createChatModel } from '#llm/create-chat-model.js';

/** The worker's assistants: the built-in catalog on the configured model, with the built-in tools. */
export function buildAgentFactory(llm: LlmConfig, worker: WorkerConfig, tools: ToolsConfig, policy?: ApprovalPolicy): AgentFactory {
  const model = createChatModel(llm);
  const builtin = buildBuiltinTools(tools);
  return new AgentFactory(
    BUILTIN_ASSISTANTS.map((a) => ({
      ...a,
      model,
      maxIterations: worker.maxIterations,
      maxToolCallsPerTurn: worker.maxToolCallsPerTurn,
      approvalPolicy: policy,
      tools: builtin,
      toolTimeoutMs: tools.toolTimeoutMs,
      enableToolActionParsing: worker.enableToolActionParsing,
      enableJsonToolCalls: worker.enableToolActionParsing,
      middleware: worker.toolPrompt ? [new ToolPromptMiddleware()] : [],
    })),
  );
}
