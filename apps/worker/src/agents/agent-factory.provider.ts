import { BUILTIN_ASSISTANTS } from '#core/engine/assistant-catalog.js';
import { AgentFactory } from '#core/engine/agent-factory.js';
import type { LlmConfig, WorkerConfig } from '#core/config/settings.js';
import { createChatModel } from '#llm/create-chat-model.js';

/** The worker's assistants: the built-in catalog on the configured model. */
export function buildAgentFactory(llm: LlmConfig, worker: WorkerConfig): AgentFactory {
  const model = createChatModel(llm);
  return new AgentFactory(
    BUILTIN_ASSISTANTS.map((a) => ({
      ...a,
      model,
      maxIterations: worker.maxIterations,
      maxToolCallsPerTurn: worker.maxToolCallsPerTurn,
    })),
  );
}
