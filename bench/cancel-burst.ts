import type { Socket } from 'socket.io-client';
import { Agent, fetch } from 'undici';
import type { DoneEventDict, EventDict } from '#core/events/execution-event.js';
import { connectChat } from '#test/support/chat-clients.js';
import { epochNow } from './clock.js';
import { RunCheck } from './run-check.js';

export interface CancelBurstOptions {
  url: string;
  apiKey: string;
  /** Runs streaming when the burst is sent, one socket each; one cancel per run. */
  runs: number;
  /** Each run's chat: a stream long enough to outlast the burst. */
  message: string;
  /** Give up on a run that has not streamed, or a cancel not answered by a done, after this long. */
  timeoutMs: number;
}

export interface CancelBurstResult {
  /** Client sends the REST cancel → that run's done arrives on its socket, ms (runs that got a done). */
  latencyMs: number[];
  /** The REST answer's round trip, ms. */
  restMs: number[];
  /** Runs whose done said cancelled. */
  cancelled: number;
  /** Runs whose done did not say cancelled (they ended on their own or failed). */
  notCancelled: number;
  /** Cancels with no done within `timeoutMs`. */
  noDone: number;
  /** REST answers other than 200 {cancelled: true}, by status and reason. */
  refused: Record<string, number>;
  /** Runs whose events were not well formed (RunCheck), by first problem. */
  gaps: Record<string, number>;
}

interface BurstRun {
  socket: Socket;
  check: RunCheck;
  sessionId?: string;
  doneAt?: number;
  streaming: Promise<void>;
  done: Promise<DoneEventDict | undefined>;
}

/**
 * Starts `runs` streaming chats, one per socket; once every one has streamed a text event,
 * sends one REST cancel per run all at once (`POST /api/v1/chat/{session_id}/cancel`), each on
 * a keep-alive connection of its own opened beforehand, and times each from its send to that
 * run's done on its socket.
 */
export async function measureCancelBurst(options: CancelBurstOptions): Promise<CancelBurstResult> {
  const runs: BurstRun[] = [];
  const result: CancelBurstResult = { latencyMs: [], restMs: [], cancelled: 0, notCancelled: 0, noDone: 0, refused: {}, gaps: {} };
  const timers: NodeJS.Timeout[] = [];
  let dispatcher: Agent | undefined;
  const within = <T>(promise: Promise<T>, fallback: T) =>
    Promise.race([promise, new Promise<T>((resolve) => timers.push(setTimeout(() => resolve(fallback), options.timeoutMs)))]);
  try {
    for (let first = 0; first < options.runs; first += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, options.runs - first) }, () => connectChat(options.url, options.apiKey)));
      for (const socket of batch) {
        const run = { socket, check: new RunCheck() } as BurstRun;
        let streamed: () => void = () => undefined;
        let ended: (e: DoneEventDict) => void = () => undefined;
        run.streaming = new Promise<void>((resolve) => (streamed = resolve));
        run.done = new Promise<DoneEventDict>((resolve) => (ended = resolve));
        socket.on('event', (event: EventDict) => {
          run.check.record(event);
          run.sessionId ??= event.session_id;
          if (event.event_type === 'text') streamed();
          if (event.event_type === 'done') {
            run.doneAt ??= epochNow();
            streamed(); // a run that ended before streaming must not hold the burst back
            ended(event);
          }
        });
        runs.push(run);
      }
    }
    for (const run of runs) run.socket.emit('message', { type: 'chat', payload: { message: options.message } });
    const ready = await within(Promise.all(runs.map((run) => run.streaming)).then(() => true), false);
    if (!ready) throw new Error(`not every run streamed within ${options.timeoutMs} ms`);
    // Each person's client has its HTTP connection open already, as a page that loaded its
    // history does: one keep-alive connection per run, opened here, untimed (Node also loads its
    // fetch on first use). New connections would time 100 TCP handshakes on a busy machine too.
    const connections = new Agent({ connections: options.runs, keepAliveTimeout: 60_000 });
    dispatcher = connections;
    await Promise.all(runs.map(() => fetch(`${options.url}/api/v1/health/live`, { dispatcher }).then((res) => res.arrayBuffer())));

    await Promise.all(
      runs.map(async (run) => {
        const sentAt = epochNow();
        const answer = fetch(`${options.url}/api/v1/chat/${run.sessionId}/cancel`, { method: 'POST', dispatcher, headers: { 'x-api-key': options.apiKey } }).then(
          async (res) => {
            result.restMs.push(epochNow() - sentAt);
            const body = (await res.json().catch(() => ({}))) as { cancelled?: boolean; reason?: string; error_code?: string };
            if (res.status !== 200 || body.cancelled !== true) {
              const key = `${res.status}${body.reason ?? body.error_code ? ` ${body.reason ?? body.error_code}` : ''}`;
              result.refused[key] = (result.refused[key] ?? 0) + 1;
            }
          },
          (err: unknown) => {
            const key = `fetch failed: ${err instanceof Error ? err.message : String(err)}`;
            result.refused[key] = (result.refused[key] ?? 0) + 1;
          },
        );
        const done = await within(run.done, undefined);
        await answer;
        if (!done) result.noDone++;
        else if (done.cancelled) {
          result.cancelled++;
          result.latencyMs.push(run.doneAt! - sentAt);
        } else result.notCancelled++;
      }),
    );
    // Events after a done would show here.
    await new Promise((resolve) => setTimeout(resolve, 250));
    for (const run of runs) {
      const problem = run.check.problem;
      if (problem) result.gaps[problem] = (result.gaps[problem] ?? 0) + 1;
    }
    return result;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    await dispatcher?.close();
    for (const run of runs) run.socket.disconnect();
  }
}
