import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { connectChat } from '../test/support/chat-clients.js';
import { epochNow, readStamp } from './clock.js';

const LOOP_DELAY_RESOLUTION_MS = 10;

export interface ChatLoadOptions {
  url: string;
  apiKey: string;
  /** Concurrent sessions, one socket and one chat each. */
  sessions: number;
  /** The chat message: the scripted LLM server's directives. */
  message: string;
  /** The chats are started evenly over this window, so their streams are not phase-locked. */
  staggerMs: number;
  /** Runs without a `done` this long after the last chat was sent count as failed. */
  timeoutMs: number;
  /** Sockets connecting at the same time. */
  connectConcurrency?: number;
}

export interface ChatLoadResult {
  sessions: number;
  completed: number;
  failed: number;
  /** Failed runs by reason: an error code, `refused:<code>`, `disconnected` or `timeout`. */
  failures: Record<string, number>;
  /** Client clock at emit → client clock at that run's `run_started`, ms. */
  runStartedMs: number[];
  /** Client clock at emit → the chat's acknowledgement (admitted, stored, enqueued, followed), ms. */
  ackMs: number[];
  /** Client receive time − the LLM server's stamp, per stamped text event, ms. */
  eventOverheadMs: number[];
  /** The same events split at the worker: stamp → the event's `timestamp` (ms resolution, truncated). */
  llmToWorkerMs: number[];
  /** The same events split at the worker: the event's `timestamp` → client receive. */
  workerToClientMs: number[];
  /** Emit → the `run_started` event's `timestamp` (set by the worker; ms resolution, truncated). */
  emitToWorkerStartMs: number[];
  /** Text events that carried no stamp (the final, empty one of each run). */
  unstampedTextEvents: number;
  /** Time to connect every socket, ms. */
  connectMs: number;
  /** First emit → last run settled, ms. */
  wallMs: number;
  /** This process's event-loop lag while the runs streamed: if high, its receive times are late too. */
  clientLoopDelayMs: { p50: number; p99: number; max: number };
}

interface Probe {
  socket: Socket;
  emittedAt: number;
  startedAt?: number;
  error?: string;
  settled: boolean;
}

/**
 * Runs `sessions` concurrent chats through the real gateway over Socket.IO and times every
 * run's start and every streamed text event on the client's clock. Every socket is connected
 * before the first chat is sent; each socket carries exactly one run, so its events need no
 * matching by run id (`run_started` may arrive before the chat's acknowledgement).
 */
export async function runChatLoad(options: ChatLoadOptions): Promise<ChatLoadResult> {
  const result: ChatLoadResult = {
    sessions: options.sessions,
    completed: 0,
    failed: 0,
    failures: {},
    runStartedMs: [],
    ackMs: [],
    eventOverheadMs: [],
    llmToWorkerMs: [],
    workerToClientMs: [],
    emitToWorkerStartMs: [],
    unstampedTextEvents: 0,
    connectMs: 0,
    wallMs: 0,
    clientLoopDelayMs: { p50: NaN, p99: NaN, max: NaN },
  };
  const probes: Probe[] = [];
  let unsettled = options.sessions;
  let allSettled: () => void = () => undefined;
  const settledAll = new Promise<void>((resolve) => (allSettled = resolve));

  const settle = (probe: Probe, failure?: string) => {
    if (probe.settled) return;
    probe.settled = true;
    if (failure) {
      result.failed++;
      result.failures[failure] = (result.failures[failure] ?? 0) + 1;
    } else {
      result.completed++;
    }
    if (--unsettled === 0) allSettled();
  };

  const onEvent = (probe: Probe, event: EventDict) => {
    const now = epochNow();
    switch (event.event_type) {
      case 'text': {
        const stamp = readStamp(event.content);
        if (stamp === undefined) {
          result.unstampedTextEvents++;
          break;
        }
        result.eventOverheadMs.push(now - stamp);
        const created = Date.parse(event.timestamp);
        result.llmToWorkerMs.push(created - stamp);
        result.workerToClientMs.push(now - created);
        break;
      }
      case 'run_started':
        if (probe.startedAt === undefined) {
          probe.startedAt = now;
          result.runStartedMs.push(now - probe.emittedAt);
          result.emitToWorkerStartMs.push(Date.parse(event.timestamp) - probe.emittedAt);
        }
        break;
      case 'error':
        probe.error ??= String(event.error_code ?? 'error');
        break;
      case 'done':
        settle(probe, probe.error);
        break;
    }
  };

  const connectStarted = epochNow();
  try {
    const concurrency = options.connectConcurrency ?? 50;
    for (let first = 0; first < options.sessions; first += concurrency) {
      const batch = Array.from({ length: Math.min(concurrency, options.sessions - first) }, () => connectChat(options.url, options.apiKey));
      const connected = await Promise.allSettled(batch);
      for (const outcome of connected) {
        if (outcome.status === 'rejected') continue;
        const probe: Probe = { socket: outcome.value, emittedAt: 0, settled: false };
        probe.socket.on('event', (event: EventDict) => onEvent(probe, event));
        probe.socket.on('disconnect', () => settle(probe, 'disconnected'));
        probes.push(probe);
      }
      const refused = connected.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      if (refused) throw new Error(`socket ${probes.length + 1} of ${options.sessions} could not connect: ${String(refused.reason)}`);
    }
    result.connectMs = epochNow() - connectStarted;

    const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
    loopDelay.enable();
    const firstEmit = epochNow();
    const send = (probe: Probe) => {
      probe.emittedAt = epochNow();
      probe.socket.emit('message', { type: 'chat', payload: { message: options.message } }, (ack: { ok: boolean; error_code?: string }) => {
        result.ackMs.push(epochNow() - probe.emittedAt);
        if (!ack.ok) settle(probe, `refused:${ack.error_code}`);
      });
    };
    const timers = probes.map((probe, i) => setTimeout(() => send(probe), (i * options.staggerMs) / options.sessions));
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([
      settledAll,
      new Promise<void>((resolve) => (deadline = setTimeout(resolve, options.staggerMs + options.timeoutMs))),
    ]);
    clearTimeout(deadline);
    for (const timer of timers) clearTimeout(timer);
    for (const probe of probes) if (!probe.settled) settle(probe, 'timeout');
    result.wallMs = epochNow() - firstEmit;
    loopDelay.disable();
    // The histogram holds the timer's whole interval: the lag is what exceeds the resolution.
    const lag = (ns: number) => Math.max(0, ns / 1e6 - LOOP_DELAY_RESOLUTION_MS);
    result.clientLoopDelayMs = { p50: lag(loopDelay.percentile(50)), p99: lag(loopDelay.percentile(99)), max: lag(loopDelay.max) };
    return result;
  } finally {
    for (const probe of probes) {
      probe.settled = true;
      probe.socket.disconnect();
    }
  }
}
