import type { ExecutionEvent } from '#core/events/execution-event.js';
import type { ToolContext } from '#core/tools/tool.js';

/** A tool context for unit specs; events a tool emits are collected in `emitted`. */
export function fakeToolContext(overrides: Partial<ToolContext> = {}): ToolContext & { emitted: ExecutionEvent[] } {
  const emitted: ExecutionEvent[] = [];
  return {
    caller: { tenantId: 't', userId: 'u', role: 'user' },
    sessionId: 's',
    runId: 'r',
    toolCallId: 'c',
    signal: new AbortController().signal,
    emit: (build) => emitted.push(build({ sessionId: 's', runId: 'r' })),
    ...overrides,
    emitted,
  };
}
