import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { connectChat } from '../test/support/chat-clients.js';
import { epochNow, readStamps } from './clock.js';
import { RunCheck } from './run-check.js';

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
  /** How long sockets stay open after the last run settled, to catch events after a done (default 250 ms). */
  lingerMs?: number;
  /** Called just before the first chat is sent (every socket is connected by then). */
  onFirstEmit?: () => void;
  /** Called with every event a client receives, after it is counted (e.g. to count tool results). */
  onEvent?: (event: EventDict) => void;
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
  /** Client receive time − the LLM server's stamp, per stamped chunk (a coalesced text event carries several), ms. */
  eventOverheadMs: number[];
  /** The same chunks split at the worker: stamp → the event's `timestamp` (ms resolution, truncated). */
  llmToWorkerMs: number[];
  /** Per text event: the event's `timestamp` → client receive. */
  workerToClientMs: number[];
  /** Text events that carried at least one stamp. */
  stampedTextEvents: number;
  /** Emit → the `run_queued` event's `timestamp` (set by the gateway as it enqueues; ms resolution, truncated). */
  emitToQueuedMs: number[];
  /** Emit → the `run_started` event's `timestamp` (set by the worker; ms resolution, truncated). */
  emitToWorkerStartMs: number[];
  /** Text events that carried no stamp (the final, empty one of each run). */
  unstampedTextEvents: number;
  /** Every event the clients received, of every type (seq 0 gateway errors included). */
  eventsReceived: number;
  /** Runs whose events were not well formed (see RunCheck), whether they completed or failed. */
  gapped: number;
  /** Gapped runs by their first problem. */
  gaps: Record<string, number>;
  /** Runs failed or gapped (each run counted once). */
  failedOrGapped: number;
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
  check: RunCheck;
  failed?: boolean;
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
    emitToQueuedMs: [],
    emitToWorkerStartMs: [],
    unstampedTextEvents: 0,
    stampedTextEvents: 0,
    eventsReceived: 0,
    gapped: 0,
    gaps: {},
    failedOrGapped: 0,
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
      probe.failed = true;
      result.failed++;
      result.failures[failure] = (result.failures[failure] ?? 0) + 1;
    } else {
      result.completed++;
    }
    if (--unsettled === 0) allSettled();
  };

  const onEvent = (probe: Probe, event: EventDict) => {
    const now = epochNow();
    result.eventsReceived++;
    probe.check.record(event);
    options.onEvent?.(event);
    switch (event.event_type) {
      case 'text': {
        const stamps = readStamps(event.content);
        if (stamps.length === 0) {
          result.unstampedTextEvents++;
          break;
        }
        result.stampedTextEvents++;
        const created = Date.parse(event.timestamp);
        for (const stamp of stamps) {
          result.eventOverheadMs.push(now - stamp);
          result.llmToWorkerMs.push(created - stamp);
        }
        result.workerToClientMs.push(now - created);
        break;
      }
      case 'run_queued':
        result.emitToQueuedMs.push(Date.parse(event.timestamp) - probe.emittedAt);
        break;
      case 'run_started':
        if (probe.startedAt === undefined) {
          probe.startedAt = now;
          result.runStartedMs.push(now - probe.emittedAt);
          result.emitToWorkerStartMs.push(Date.parse(event.timestamp) - probe.emittedAt);
        }
        break;
      case 'error':
        probe.error ??= event.error_code ?? 'error';
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
        const probe: Probe = { socket: outcome.value, emittedAt: 0, settled: false, check: new RunCheck() };
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
    options.onFirstEmit?.();
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
    await new Promise((resolve) => setTimeout(resolve, options.lingerMs ?? 250));
    for (const probe of probes) {
      const problem = probe.check.problem;
      if (problem) {
        result.gapped++;
        result.gaps[problem] = (result.gaps[problem] ?? 0) + 1;
      }
      if (problem || probe.failed) result.failedOrGapped++;
    }
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
