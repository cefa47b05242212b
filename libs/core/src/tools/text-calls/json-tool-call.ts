import { randomUUID } from 'node:crypto';
import type { ToolCallRequest } from '../../llm/chat-model.js';

export interface JsonToolCallReply {
  /** What the model says to the user alongside (or instead of) the call. */
  response: string;
  call: ToolCallRequest | null;
}

const FENCED = /^```[A-Za-z]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

/**
 * Reads the JSON reply form: the whole text is one JSON object
 * `{"response": "...", "tool_call": {"name": "...", "arguments": {...}}}`, optionally inside
 * a ``` or ```json fence. `tool_call` may be absent or null (a plain answer), and `arguments`
 * may be a JSON-encoded string, as OpenAI sends them.
 *
 * @param newId the id for the call (the form carries none); default `tc_<uuid>`
 * @returns the response and the call, or null when the text is not that form (then it is
 *   ordinary text, to be shown as written). Never throws.
 */
export function parseJsonToolCall(text: string, newId: () => string = () => `tc_${randomUUID()}`): JsonToolCallReply | null {
  let body = text.trim();
  const fenced = FENCED.exec(body);
  if (fenced) body = fenced[1]!.trim();
  if (!body.startsWith('{') || !body.endsWith('}')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (!isPlainObject(parsed) || !('response' in parsed || 'tool_call' in parsed)) return null;
  const { response = '', tool_call: toolCall = null } = parsed;
  if (typeof response !== 'string') return null;
  if (toolCall === null) return { response, call: null };
  if (!isPlainObject(toolCall) || typeof toolCall.name !== 'string' || toolCall.name.trim() === '') return null;
  const args = readArguments(toolCall.arguments);
  if (args === null) return null;
  return { response, call: { id: newId(), name: toolCall.name.trim(), arguments: args } };
}

function readArguments(value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return {};
  if (isPlainObject(value)) return value;
  if (typeof value !== 'string') return null;
  if (value.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return isPlainObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
