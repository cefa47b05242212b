import type { Socket } from 'socket.io-client';
import type { EventDict, ToolResultEventDict } from '#core/events/execution-event.js';
import { sendChat, sendMessage, type EventCollector } from './event-waits.js';

/** What a shell command, a skill script or a probe server reported. */
export interface CommandOutput {
  exit_code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs chats as an attacker who approves each of their own approval requests as it arrives, as
 * the red-team tests' user does.
 * @returns a function that sends `message` and resolves with the run's tool results once it is done.
 */
export function approvingRunner(socket: Socket, events: EventCollector, timeoutMs = 60_000): (message: string) => Promise<ToolResultEventDict[]> {
  return async (message) => {
    const approve = (event: EventDict) => {
      if (event.event_type === 'hitl_request') void sendMessage(socket, 'hitl_decision', { request_id: event.request_id, decision: 'approve' });
    };
    socket.on('event', approve);
    try {
      const ack = await sendChat(socket, { message });
      if (!ack.ok) throw new Error(`chat refused: ${JSON.stringify(ack)}`);
      await events.done(ack.run_id, timeoutMs);
      return events.ofRun(ack.run_id).filter((e): e is ToolResultEventDict => e.event_type === 'tool_result');
    } finally {
      socket.off('event', approve);
    }
  };
}

/**
 * The `{exit_code, stdout, stderr}` a tool's result carried: a shell's or a skill's own, or a
 * probe server's as JSON text, however deep the result nests it.
 * @throws Error when the result holds no command output.
 */
export function commandOutput(result: ToolResultEventDict | undefined): CommandOutput {
  const found = (value: unknown): CommandOutput | undefined => {
    if (typeof value === 'string') {
      const json = value.match(/\{"exit_code".*\}/s)?.[0];
      return json ? found(JSON.parse(json)) : undefined;
    }
    if (!value || typeof value !== 'object') return undefined;
    const record = value as Record<string, unknown>;
    if (typeof record.stdout === 'string') return { exit_code: (record.exit_code ?? record.exitCode ?? null) as number | null, stdout: record.stdout, stderr: String(record.stderr ?? '') };
    for (const inner of Object.values(record)) {
      const hit = found(inner);
      if (hit) return hit;
    }
    return undefined;
  };
  const output = result && found(result.result);
  if (!output) throw new Error(`no command output in ${JSON.stringify(result).slice(0, 500)}`);
  return output;
}
