import type { ChatMessage, ToolCallRequest } from '../llm/chat-model.js';
import type { MessageRecord, NewMessage } from './session-store.js';

/** A stored message as the model sees it: a tool message's name and call id, an assistant's tool calls, from the metadata. */
export function toChatMessage(record: MessageRecord): ChatMessage {
  const meta = record.metadata ?? {};
  return {
    role: record.role,
    content: record.content,
    ...(typeof meta.name === 'string' ? { name: meta.name } : {}),
    ...(typeof meta.tool_call_id === 'string' ? { toolCallId: meta.tool_call_id } : {}),
    ...(Array.isArray(meta.tool_calls) ? { toolCalls: meta.tool_calls as ToolCallRequest[] } : {}),
  };
}

/**
 * A model message as a row of its session: what is not text goes into the metadata.
 * @param runId the run that added it; null for conversation a client brought with a new session.
 */
export function toNewMessage(message: ChatMessage, sessionId: string, runId: string | null): NewMessage {
  return {
    sessionId,
    runId,
    role: message.role,
    content: message.content,
    metadata: {
      ...(message.name ? { name: message.name } : {}),
      ...(message.toolCallId ? { tool_call_id: message.toolCallId } : {}),
      ...(message.toolCalls?.length ? { tool_calls: message.toolCalls } : {}),
    },
  };
}
