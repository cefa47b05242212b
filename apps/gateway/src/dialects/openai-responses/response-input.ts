import type { ChatMessage, ToolSpec } from '#core/llm/chat-model.js';
import { ApiError } from '../../common/api-error.js';
import { parseClientTools, parseMessages } from '../openai-wire.js';

/** A Responses request's `input`, as DataAgent runs it. */
export type ResponseInput =
  /** New words of the conversation: the newest user message, and (stateless) what came before it. */
  | { kind: 'message'; history: ChatMessage[]; message: string; toolResults?: ChatMessage[] }
  /** The outputs of the client's function calls the previous response made (`function_call_output` items). */
  | { kind: 'tool_outputs'; outputs: Array<{ callId: string; output: string }> }
  /** Answers to the approval requests the previous response ended with (`mcp_approval_response` items). */
  | { kind: 'approvals'; approvals: Array<{ requestId: string; approve: boolean; reason: string }> };

/**
 * Reads `input`: a string (one user message) or a list of input items: messages (text, as a
 * string or `input_text`/`output_text` parts), `function_call` and `function_call_output`
 * items, or `mcp_approval_response` items. With `previous_response_id` the list holds only
 * what is new: user messages, or the outputs of the calls it made, or the answers to its approval requests.
 * @throws ApiError 400 naming the item at fault.
 */
export function parseInput(raw: unknown, continues: boolean): ResponseInput {
  if (typeof raw === 'string') {
    if (!raw.trim()) throw invalid('input is empty', 'input');
    return { kind: 'message', history: [], message: raw };
  }
  if (!Array.isArray(raw) || raw.length === 0) throw invalid('input must be a string or a non-empty list of input items', 'input');
  const items = raw.map((item, i) => {
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw invalid(`input[${i}] must be an object`, `input[${i}]`);
    return item as Record<string, unknown>;
  });
  const typeOf = (item: Record<string, unknown>) => (typeof item.type === 'string' ? item.type : 'message');

  if (items.some((item) => typeOf(item) === 'mcp_approval_response')) {
    if (!continues) throw invalid('mcp_approval_response answers an approval request of a previous response: send previous_response_id', 'previous_response_id');
    return {
      kind: 'approvals',
      approvals: items.map((item, i) => {
        if (typeOf(item) !== 'mcp_approval_response') throw invalid(`input[${i}]: an approval answer goes alone; send new messages once the run has gone on`, `input[${i}].type`);
        if (typeof item.approval_request_id !== 'string' || typeof item.approve !== 'boolean') throw invalid(`input[${i}] must be {type: "mcp_approval_response", approval_request_id, approve}`, `input[${i}]`);
        return { requestId: item.approval_request_id, approve: item.approve, reason: typeof item.reason === 'string' ? item.reason : '' };
      }),
    };
  }
  if (continues && items.every((item) => typeOf(item) === 'function_call_output')) {
    return { kind: 'tool_outputs', outputs: items.map((item, i) => ({ callId: callIdOf(item, i), output: outputOf(item.output, i) })) };
  }

  // A conversation in chat-completions terms: messages, an assistant's function calls, their outputs.
  const messages: Array<Record<string, unknown>> = [];
  items.forEach((item, i) => {
    const type = typeOf(item);
    if (type === 'message') {
      messages.push({ role: item.role, content: contentOf(item.content, i) });
    } else if (type === 'function_call') {
      const call = { id: callIdOf(item, i), type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      // Calls in a row are one assistant turn.
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls)) (last.tool_calls as unknown[]).push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: callIdOf(item, i), content: outputOf(item.output, i) });
    } else {
      throw unsupported(`input[${i}]: items of type ${JSON.stringify(type)} are not supported; send messages, function_call_output or mcp_approval_response items`, `input[${i}].type`);
    }
  });
  let parsed;
  try {
    parsed = parseMessages(messages);
  } catch (err) {
    throw asInputError(err);
  }
  if (continues && parsed.history.length > 0) {
    throw invalid('With previous_response_id, input holds only what is new (the conversation is kept): a user message, the outputs of the calls, or the answers to the approvals', 'input');
  }
  return { kind: 'message', history: parsed.history, message: parsed.message, ...(parsed.toolResults ? { toolResults: parsed.toolResults } : {}) };
}

/**
 * A Responses request's `tools` (flat function tools: `{type: 'function', name, description, parameters}`)
 * as the client's tools of chat completions.
 * @throws ApiError 400 naming a tool DataAgent cannot take.
 */
export function parseResponseTools(raw: unknown, toolChoice: unknown): ToolSpec[] {
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) throw invalid('tools must be an array of function tools', 'tools');
  const tools = Array.isArray(raw)
    ? raw.map((tool) => {
        const { type, name, description, parameters } = (tool ?? {}) as Record<string, unknown>;
        return type === 'function' ? { type, function: { name, description, parameters: parameters ?? undefined } } : tool;
      })
    : raw;
  try {
    return parseClientTools(tools, toolChoice);
  } catch (err) {
    throw asInputError(err, 'tools');
  }
}

function contentOf(content: unknown, i: number): unknown {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`input[${i}].content must be a string or a list of text parts`, `input[${i}].content`);
  return content.map((part, j) => {
    const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
    if ((type !== 'input_text' && type !== 'output_text' && type !== 'text') || typeof text !== 'string') {
      throw unsupported(`input[${i}].content[${j}]: only text parts (input_text, output_text) are supported`, `input[${i}].content`);
    }
    return { type: 'text', text };
  });
}

function callIdOf(item: Record<string, unknown>, i: number): string {
  if (typeof item.call_id !== 'string' || item.call_id === '') throw invalid(`input[${i}].call_id must be the call_id of a function_call`, `input[${i}].call_id`);
  return item.call_id;
}

function outputOf(output: unknown, i: number): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return output
      .map((part, j) => {
        const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
        if (type !== 'input_text' || typeof text !== 'string') throw unsupported(`input[${i}].output[${j}]: only text output is supported`, `input[${i}].output`);
        return text;
      })
      .join('');
  }
  throw invalid(`input[${i}].output must be a string`, `input[${i}].output`);
}

/** chat-completions' errors speak of `messages[i]`; here that is `input[i]`. */
function asInputError(err: unknown, field = 'input'): unknown {
  if (!(err instanceof ApiError)) return err;
  const rename = (text: string) => text.replace(/\bmessages\b/g, field === 'tools' ? 'tools' : 'input').replace(/\bfunction\.(name|parameters)\b/g, '$1');
  const fields = (err.details as { fields?: Record<string, unknown> }).fields;
  const details = fields ? { ...err.details, fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [rename(k), v])) } : err.details;
  return new ApiError(err.status, err.errorCode, rename(err.message), details, err.headers);
}

function invalid(message: string, field: string): ApiError {
  return new ApiError(400, 'invalid_request', message, { fields: { [field]: [message] } });
}

function unsupported(message: string, field: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', message, { fields: { [field]: ['unsupported'] } }, { 'x-should-retry': 'false' });
}
