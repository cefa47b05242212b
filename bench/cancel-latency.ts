import type { Socket } from 'socket.io-client';
import type { DoneEventDict, EventDict } from '#core/events/execution-event.js';
import { connectChat } from '#test/support/chat-clients.js';
import { epochNow } from './clock.js';

export interface CancelLatencyOptions {
  url: string;
  apiKey: string;
  /** Runs streaming at once when the cancels start. */
  activeRuns: number;
  /** Gap between cancels, so most are sent while the others keep streaming. */
  spacingMs: number;
}

export interface CancelLatencyResult {
  /** Client sends cancel → client receives that run's done{cancelled:true}. */
  latencyMs: number[];
  cancelled: number;
  notCancelled: number;
}

/**
 * Starts `activeRuns` long streaming runs, waits until each streams, then cancels them one
 * by one over Socket.IO and measures cancel → done at the client.
 */
export async function measureCancelLatency(options: CancelLatencyOptions): Promise<CancelLatencyResult> {
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < options.activeRuns; i++) sockets.push(await connectChat(options.url, options.apiKey));
    const runs = await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<{ socket: Socket; sessionId: string; runId: string }>((resolve, reject) => {
            let runId: string | undefined;
            let streaming = false;
            const onEvent = (e: EventDict) => {
              if (runId && e.run_id === runId && e.event_type === 'text') streaming = true;
              if (streaming && runId) {
                socket.off('event', onEvent);
                resolve({ socket, sessionId: e.session_id, runId });
              }
            };
            socket.on('event', onEvent);
            socket
              .timeout(30_000)
              .emitWithAck('message', { type: 'chat', payload: { message: '[[chunks:2000]] [[slow:100]]' } })
              .then((ack: { run_id: string }) => (runId = ack.run_id), reject);
          }),
      ),
    );
    const latencyMs: number[] = [];
    let cancelled = 0;
    let notCancelled = 0;
    await Promise.all(
      runs.map(async (run, i) => {
        await new Promise((r) => setTimeout(r, i * options.spacingMs));
        const done = new Promise<DoneEventDict>((resolve) => {
          const onEvent = (e: EventDict) => {
            if (e.event_type === 'done' && e.run_id === run.runId) {
              run.socket.off('event', onEvent);
              resolve(e);
            }
          };
          run.socket.on('event', onEvent);
        });
        const sentAt = epochNow();
        run.socket.emit('message', { type: 'cancel', payload: { session_id: run.sessionId } });
        const event = await done;
        latencyMs.push(epochNow() - sentAt);
        if (event.cancelled) cancelled++;
        else notCancelled++;
      }),
    );
    return { latencyMs, cancelled, notCancelled };
  } finally {
    for (const s of sockets) s.disconnect();
  }
}
