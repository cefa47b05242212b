import type { ChatMessage, ToolCallRequest, ToolSpec } from '#core/llm/chat-model.js';
import { ApiError } from '../common/api-error.js';

/** A chat completion request's `messages` as DataAgent runs them. */
export interface ParsedConversation {
  /** The conversation before the newest input, oldest first. */
  history: ChatMessage[];
  /** The newest user message; empty when the request continues from `toolResults`. */
  message: string;
  /** The results of the client's tools the last assistant message called (`role: "tool"` messages last). */
  toolResults?: ChatMessage[];
}

/** Function names OpenAI's API accepts, which every provider behind DataAgent takes too. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_CLIENT_TOOLS = 128;

/**
 * The `messages` of a chat completion request as a conversation and its newest input: text
 * content (a string, or text parts), `developer` as `system`, an assistant's `tool_calls` and
 * the `tool` messages that answer them. The input is the last user message, or the `tool`
 * messages that end the conversation (the results of the client's tools the assistant called).
 * @throws ApiError 400 naming the message at fault: a message that is not text, a tool message
 *   that answers no call of the assistant message before it, a conversation that ends otherwise.
 */
export function parseMessages(raw: unknown[]): ParsedConversation {
  const messages: ChatMessage[] = [];
  // The calls of the latest assistant message, while only tool messages follow it.
  let open = new Map<string, string>();
  raw.forEach((m, i) => {
    if (!m || typeof m !== 'object') throw invalid(`messages[${i}] must be an object`, `messages[${i}]`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (role === 'tool') {
      const id = (m as { tool_call_id?: unknown }).tool_call_id;
      if (typeof id !== 'string' || !open.has(id)) throw invalid(`messages[${i}] (role tool) must answer a tool call of the assistant message before it by its tool_call_id`, `messages[${i}].tool_call_id`);
      messages.push({ role: 'tool', toolCallId: id, name: open.get(id)!, content: textOf(content, i) });
      return;
    }
    open = new Map();
    if (role === 'function') throw invalid(`messages[${i}]: role function (the deprecated function calling) is not supported; send tools and role tool messages`, `messages[${i}].role`);
    if (role !== 'system' && role !== 'developer' && role !== 'user' && role !== 'assistant') {
      throw invalid(`messages[${i}].role must be system, developer, user, assistant or tool`, `messages[${i}].role`);
    }
    if (role === 'assistant') {
      const calls = toolCallsOf((m as { tool_calls?: unknown }).tool_calls, i);
      if (calls.length === 0 && (content === null || content === undefined)) return;
      open = new Map(calls.map((c) => [c.id, c.name]));
      messages.push({ role: 'assistant', content: content === null || content === undefined ? '' : textOf(content, i), ...(calls.length > 0 ? { toolCalls: calls } : {}) });
      return;
    }
    messages.push({ role: role === 'developer' ? 'system' : role, content: textOf(content, i) });
  });
  const firstResult = messages.findLastIndex((m) => m.role !== 'tool') + 1;
  if (firstResult < messages.length) return { history: messages.slice(0, firstResult), message: '', toolResults: messages.slice(firstResult) };
  const last = messages.at(-1);
  if (!last || last.role !== 'user') throw invalid('The last message must come from the user, or be the results (role tool) of the tool calls before it', 'messages');
  if (!last.content.trim()) throw invalid('The last user message is empty', 'messages');
  return { history: messages.slice(0, -1), message: last.content };
}

/** An assistant message's `tool_calls`, with their arguments as objects. */
function toolCallsOf(raw: unknown, i: number): ToolCallRequest[] {
  if (raw === undefined || raw === null) return [];
  const field = `messages[${i}].tool_calls`;
  if (!Array.isArray(raw)) throw invalid(`${field} must be an array`, field);
  return raw.map((call, j) => {
    const { id, type, function: fn } = (call ?? {}) as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
    if (typeof id !== 'string' || id === '' || (type !== undefined && type !== 'function') || typeof fn?.name !== 'string') {
      throw invalid(`${field}[${j}] must be {id, type: "function", function: {name, arguments}}`, field);
    }
    return { id, name: fn.name, arguments: argumentsOf(fn.arguments) };
  });
}

/** Arguments as an object; text that is not a JSON object is kept as `{_raw}`, as the model layer keeps it, and sent back verbatim. */
function argumentsOf(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null || raw === '') return {};
  if (typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, unknown>;
  const text = String(raw);
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // kept raw below
  }
  return { _raw: text };
}

/** A tool call's arguments as the `arguments` string of OpenAI's wire. */
export function wireArguments(args: Record<string, unknown>): string {
  const keys = Object.keys(args);
  if (keys.length === 1 && keys[0] === '_raw' && typeof args._raw === 'string') return args._raw;
  return JSON.stringify(args);
}

/**
 * A request's `tools`: function tools the client runs itself, offered to the model beside the
 * assistant's own. `tool_choice` may be absent or `auto`: the model decides, between the
 * assistant's tools and the client's.
 * @throws ApiError 400 naming what the assistant cannot take: another kind of tool, a bad or
 *   repeated name, parameters that are not a JSON Schema object, another `tool_choice`.
 */
export function parseClientTools(raw: unknown, toolChoice: unknown): ToolSpec[] {
  if (toolChoice !== undefined && toolChoice !== null && toolChoice !== 'auto') {
    throw unsupported('tool_choice other than "auto" is not supported: the assistant decides between its own tools and yours', 'tool_choice');
  }
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalid('tools must be an array of function tools', 'tools');
  if (raw.length > MAX_CLIENT_TOOLS) throw invalid(`tools may hold at most ${MAX_CLIENT_TOOLS} tools`, 'tools');
  const seen = new Set<string>();
  return raw.map((tool, i) => {
    const { type, function: fn } = (tool ?? {}) as { type?: unknown; function?: { name?: unknown; description?: unknown; parameters?: unknown } };
    if (type !== 'function') throw unsupported(`tools[${i}]: only function tools can be passed to the assistant (type ${JSON.stringify(type)} cannot)`, `tools[${i}].type`);
    const name = fn?.name;
    if (typeof name !== 'string' || !FUNCTION_NAME.test(name)) throw invalid(`tools[${i}].function.name must be 1-64 letters, digits, _ or -`, `tools[${i}].function.name`);
    if (seen.has(name)) throw invalid(`tools[${i}].function.name: "${name}" is given twice`, `tools[${i}].function.name`);
    seen.add(name);
    const parameters = fn?.parameters ?? { type: 'object', properties: {} };
    if (typeof parameters !== 'object' || Array.isArray(parameters) || parameters === null) throw invalid(`tools[${i}].function.parameters must be a JSON Schema object`, `tools[${i}].function.parameters`);
    const description = typeof fn?.description === 'string' ? fn.description : '';
    return { name, description, parameters: parameters as Record<string, unknown> };
  });
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

function unsupported(message: string, field: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', message, { fields: { [field]: ['unsupported'] } }, { 'x-should-retry': 'false' });
}

/** One line in the answer for a tool the run used: tools run inside DataAgent, the client sees what happened. */
export function toolSummary(name: string, status: string): string {
  return `\n\n> tool \`${name}\`: ${status}\n\n`;
}
