/**
 * An approval request's id: `<run>:<tool call>:<hash of the call's arguments>`. Made once, by
 * the engine as it asks; the dialects read the tool call and the run back from it.
 */
export function approvalRequestId(runId: string, toolCallId: string, argsHash: string): string {
  return `${runId}:${toolCallId}:${argsHash.slice(0, 16)}`;
}

/** The tool call an approval request asks about (a tool call id may hold `:` itself); an id of another shape is its own. */
export function toolCallOfRequest(requestId: string): string {
  const parts = requestId.split(':');
  return parts.length >= 3 ? parts.slice(1, -1).join(':') : requestId;
}

/** The run an approval request belongs to; undefined for an id of another shape. */
export function runOfRequest(requestId: string): string | undefined {
  const parts = requestId.split(':');
  return parts.length >= 3 ? parts[0] : undefined;
}
