import { generateToolPrompt } from '../tools/text-calls/tool-prompt.js';
import type { AgentMiddleware, ModelCallState } from './agent-middleware.js';

/**
 * Describes the available tools in the system prompt with the `<tool_action>` syntax, for
 * models without native tool calls (DATAAGENT_TOOL_PROMPT=true).
 */
export class ToolPromptMiddleware implements AgentMiddleware {
  readonly name = 'tool-prompt';

  beforeModel(state: ModelCallState): void {
    const system = state.messages[0];
    if (system?.role !== 'system') return;
    state.messages[0] = { ...system, content: `${system.content}\n\n${generateToolPrompt(state.tools)}` };
  }
}
