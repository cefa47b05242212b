import type { ContentBlockParam, MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ChatMessage, ToolSpec } from '#core/llm/chat-model.js';
import { wireToolName } from '#core/tools/tool-names.js';

/** A conversation in the Messages API's shape: the system prompt apart, then user and assistant turns. */
export interface AnthropicConversation {
  system?: string;
  messages: MessageParam[];
}

type Turn = { role: 'user' | 'assistant'; content: ContentBlockParam[] };

/** Said in place of a history that starts with the assistant (cut to fit), since the API wants a user turn first. */
const EARLIER = '(The earlier part of this conversation is not shown.)';

/**
 * Our messages in the Messages API's shape. System messages go to `system`; tool results become
 * `tool_result` blocks of a user turn; turns of one role in a row are merged, because the API
 * wants them to alternate. As for OpenAI, a call left without a result gets a placeholder error
 * result and a result whose call is not in the turn before becomes user text; empty texts are
 * left out, since the API refuses empty text blocks.
 */
export function toAnthropicConversation(messages: ChatMessage[]): AnthropicConversation {
  const system: string[] = [];
  const turns: Turn[] = [];
  const push = (role: Turn['role'], blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) {
      // Tool results must lead their user turn.
      const results = [...last.content, ...blocks].filter((b) => b.type === 'tool_result');
      last.content = [...results, ...[...last.content, ...blocks].filter((b) => b.type !== 'tool_result')];
    } else {
      turns.push({ role, content: blocks });
    }
  };
  const text = (value: string): ContentBlockParam[] => (value.trim() === '' ? [] : [{ type: 'text', text: value }]);

  let pending = new Map<string, string>(); // call id → tool name, of the last assistant turn
  const closePending = () => {
    const missing: ToolResultBlockParam[] = [...pending].map(([id, name]) => ({
      type: 'tool_result',
      tool_use_id: id,
      content: JSON.stringify({ success: false, error: `no result was recorded for ${name}` }),
      is_error: true,
    }));
    push('user', missing);
    pending = new Map();
  };

  for (const message of messages) {
    if (message.role === 'system') {
      if (message.content.trim() !== '') system.push(message.content);
      continue;
    }
    if (message.role === 'tool') {
      const id = message.toolCallId;
      if (id !== undefined && pending.has(id)) {
        pending.delete(id);
        push('user', [{ type: 'tool_result', tool_use_id: id, content: message.content === '' ? '(empty)' : message.content }]);
      } else {
        closePending();
        push('user', text(`Result of tool ${message.name ?? 'call'}: ${message.content}`));
      }
      continue;
    }
    closePending();
    if (message.role === 'user') {
      push('user', text(message.content));
      continue;
    }
    const calls = message.toolCalls ?? [];
    push('assistant', [...text(message.content), ...calls.map((call) => ({ type: 'tool_use' as const, id: call.id, name: wireToolName(call.name), input: call.arguments }))]);
    for (const call of calls) pending.set(call.id, call.name);
  }
  closePending();
  if (turns[0]?.role === 'assistant') turns.unshift({ role: 'user', content: [{ type: 'text', text: EARLIER }] });
  return { ...(system.length > 0 ? { system: system.join('\n\n') } : {}), messages: turns };
}

/** A tool as the Messages API describes it; its schema must be an object schema. */
export function toAnthropicTool(tool: ToolSpec): Tool {
  const schema = Object.keys(tool.parameters).length > 0 ? tool.parameters : { properties: {} };
  return { name: wireToolName(tool.name), description: tool.description, input_schema: { ...schema, type: 'object' } };
}
