import { fitToBytes, formatBytes } from '../llm/byte-budget.js';

/** Default cap, in UTF-8 bytes, of one tool result as the event, the stores and the model see it. */
export const DEFAULT_TOOL_RESULT_MAX_BYTES = 64 * 1024;

/**
 * What a tool's result becomes in the `tool_result` event (`result`) and in the tool message for
 * the model (`content`). A result whose text form is over `maxBytes` is cut to that many bytes,
 * with a marker saying how much was left out: `result` is then that same text.
 */
export function capToolOutput(payload: unknown, maxBytes: number): { result: unknown; content: string } {
  const content = typeof payload === 'string' ? payload : JSON.stringify(payload);
  if (content === undefined || Buffer.byteLength(content) <= maxBytes) return { result: payload, content };
  const capped = fitToBytes(
    content,
    maxBytes,
    ({ omitted, total }) =>
      `\n[… cut: ${formatBytes(omitted)} of ${formatBytes(total)} not shown; tool results are limited to ${formatBytes(maxBytes)}. ` +
      'Ask for a smaller part: read files in pages with offset and limit, narrow the pattern or the query.]',
  );
  return { result: capped, content: capped };
}

/**
 * A tool's full result for the event (ToolResult.content), or undefined when its JSON is over
 * `maxBytes`: the event then carries only what the model saw, which is capped with a marker.
 */
export function capToolContent(content: unknown, maxBytes: number): unknown {
  if (content === undefined) return undefined;
  const json = JSON.stringify(content);
  return json !== undefined && Buffer.byteLength(json) <= maxBytes ? content : undefined;
}
