import type { ChatMessage, ToolCallRequest } from '#core/llm/chat-model.js';
import type { MessageRecord, NewMessage } from '#core/session/session-store.js';

/**
 * The conversation `runId` continues, as model messages: everything stored except this
 * run's own messages and the user messages of runs queued after it. Answers of earlier
 * runs stored after this run's user message (DATAAGENT_MULTITASK=enqueue) are kept.
 */
export function historyBefore(records: MessageRecord[], runId: string): ChatMessage[] {
  const own = records.findIndex((r) => r.runId === runId && r.role === 'user');
  return records.filter((r, i) => r.runId !== runId && !(own !== -1 && i > own && r.role === 'user')).map(toChatMessage);
}

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

export function toNewMessage(message: ChatMessage, sessionId: string, runId: string): NewMessage {
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
