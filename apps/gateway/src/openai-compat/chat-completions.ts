import { ApiError } from '../common/api-error.js';
import type { SubmitOptions } from '../chat/chat.service.js';

/** A message of an OpenAI chat request as DataAgent stores it. */
export type ConversationMessage = NonNullable<SubmitOptions['history']>[number];

/**
 * The `messages` of a chat completion request as a conversation and its newest user message:
 * text content (a string, or text parts), `developer` as `system`; assistant tool calls and tool
 * messages (client-side tools, which DataAgent does not run) are left out.
 * @throws ApiError 400 when there is no user message last, or a message is not text.
 */
export function parseMessages(raw: unknown[]): { history: ConversationMessage[]; message: string } {
  const messages: ConversationMessage[] = [];
  raw.forEach((m, i) => {
    if (!m || typeof m !== 'object') throw invalid(`messages[${i}] must be an object`, `messages[${i}]`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (role === 'tool' || role === 'function') return;
    if (role !== 'system' && role !== 'developer' && role !== 'user' && role !== 'assistant') {
      throw invalid(`messages[${i}].role must be system, developer, user, assistant or tool`, `messages[${i}].role`);
    }
    if (role === 'assistant' && (content === null || content === undefined)) return;
    messages.push({ role: role === 'developer' ? 'system' : role, content: textOf(content, i) });
  });
  const last = messages.at(-1);
  if (!last || last.role !== 'user') throw invalid('The last message must come from the user', 'messages');
  if (!last.content.trim()) throw invalid('The last user message is empty', 'messages');
  return { history: messages.slice(0, -1), message: last.content };
}

function textOf(content: unknown, i: number): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, j) => {
        const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
        if (type !== 'text' || typeof text !== 'string') throw invalid(`messages[${i}].content[${j}]: only text parts are supported`, `messages[${i}].content`);
        return text;
      })
      .join('');
  }
  throw invalid(`messages[${i}].content must be a string or an array of text parts`, `messages[${i}].content`);
}

function invalid(message: string, field: string): ApiError {
  return new ApiError(400, 'invalid_request', message, { fields: { [field]: [message] } });
}

/** One line in the answer for a tool the run used: tools run inside DataAgent, the client sees what happened. */
export function toolSummary(name: string, status: string): string {
  return `\n\n> tool \`${name}\`: ${status}\n\n`;
}
