import type { Socket } from 'socket.io-client';
import type { EventDict } from '#core/events/execution-event.js';
import { connectChat } from '#test/support/chat-clients.js';
import type { BenchStack, BenchWorker } from './bench-stack.js';
import { epochNow } from './clock.js';

/** A run that streams for about 5 s: long enough to be held when its worker is killed. */
export const TAKEOVER_MESSAGE = '[[chunks:100]] [[slow:50]]';

export interface TakeoverOptions {
  url: string;
  apiKey: string;
  /** Kills to make (BENCH_KILLS), one run each. */
  kills: number;
  /** Per kill: no continuation this long after the kill counts as a timeout (the bench moves on). */
  giveUpMs: number;
  log: (line: string) => void;
}

export type TakeoverOutcome = 'continued' | 'timeout' | 'ended';

export interface TakeoverSample {
  /** DATAAGENT_WORKER_ID of the worker killed while it held the run. */
  killedWorker: string;
  outcome: TakeoverOutcome;
  /** kill -9 sent → the continuation event received by the client, ms (null unless continued). */
  ms: number | null;
  /** The event that showed the continuation: `run_started` or `error/worker_lost`. */
  via?: string;
  /** The worker that continued it, when the continuation event names it (run_started does). */
  takenOverBy?: string;
  /** The run reached its done after the continuation. */
  completed: boolean;
}

export interface TakeoverResult {
  samples: TakeoverSample[];
  /** kill → continuation, ms, of the kills whose run continued. */
  latencyMs: number[];
  continued: number;
  /** No continuation within giveUpMs. */
  timedOut: number;
  /** The run ended (done) after the kill without another worker continuing it. */
  ended: number;
  /** Continued runs that then reached their done. */
  completedAfterTakeover: number;
}

const alive = (w: BenchWorker) => w.process.proc.exitCode === null && w.process.proc.signalCode === null;

/** The events of one socket (one session, one run), with waits on them. */
class EventTap {
  readonly events: Array<{ event: EventDict; at: number }> = [];
  private waiters: Array<() => void> = [];

  constructor(socket: Socket) {
    socket.on('event', (event: EventDict) => {
      this.events.push({ event, at: epochNow() });
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** The first recorded event (from index `from`) matching, or undefined after `timeoutMs`. */
  async waitFor(match: (event: EventDict, at: number) => boolean, timeoutMs: number, from = 0): Promise<{ event: EventDict; at: number } | undefined> {
    const deadline = Date.now() + timeoutMs;
    let index = from;
    for (;;) {
      for (; index < this.events.length; index++) {
        const entry = this.events[index]!;
        if (match(entry.event, entry.at)) return entry;
      }
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

/**
 * Kill -9 of the worker holding a run → that run continuing on another worker, `kills` times.
 * Each time: one chat over Socket.IO; at its `run_started` the worker named by `worker_id` is
 * killed (SIGKILL); the continuation is the first event received after the kill with a seq
 * above every seq received before it that is `error{worker_lost}` or a `run_started` from
 * another worker. Then a replacement worker starts (so two are up again) and the run is
 * awaited to its done (cancelled if it does not come), so runs do not pile up.
 */
export async function measureTakeover(stack: Pick<BenchStack, 'workers' | 'startWorker'>, options: TakeoverOptions): Promise<TakeoverResult> {
  const { log } = options;
  const samples: TakeoverSample[] = [];
  for (let k = 1; k <= options.kills; k++) {
    while (stack.workers.filter(alive).length < 2) await stack.startWorker();
    const socket = await connectChat(options.url, options.apiKey);
    try {
      const tap = new EventTap(socket);
      const ack = (await socket.timeout(30_000).emitWithAck('message', { type: 'chat', payload: { message: TAKEOVER_MESSAGE } })) as { ok: boolean; run_id?: string; error_code?: string };
      if (!ack.ok || !ack.run_id) throw new Error(`takeover chat refused: ${ack.error_code}`);
      const runId = ack.run_id;
      const ofRun = (e: EventDict) => e.run_id === runId;
      const started = await tap.waitFor((e) => ofRun(e) && e.event_type === 'run_started', 30_000);
      if (!started) throw new Error(`takeover run ${runId}: no run_started within 30 s`);
      const startedOn = started.event.event_type === 'run_started' ? started.event.worker_id : undefined;
      const victim = stack.workers.find((w) => w.id === startedOn);
      if (!victim || !alive(victim)) throw new Error(`takeover run ${runId}: run_started names worker ${String(startedOn)}, not a live bench worker`);

      // Everything received up to here was received before the kill.
      const seenBefore = tap.events.length;
      const maxSeqBefore = Math.max(0, ...tap.events.filter((x) => ofRun(x.event)).map((x) => x.event.seq));
      const killedAt = epochNow();
      await victim.process.kill();

      const isContinuation = (e: EventDict) =>
        ofRun(e) &&
        e.seq > maxSeqBefore &&
        ((e.event_type === 'error' && e.error_code === 'worker_lost') || (e.event_type === 'run_started' && e.worker_id !== victim.id));
      const giveUpLeft = options.giveUpMs - (epochNow() - killedAt);
      const found = await tap.waitFor((e) => isContinuation(e) || (ofRun(e) && e.event_type === 'done'), giveUpLeft, seenBefore);
      const sample: TakeoverSample = { killedWorker: victim.id, outcome: 'timeout', ms: null, completed: false };
      if (found && isContinuation(found.event) && found.at - killedAt <= options.giveUpMs) {
        sample.outcome = 'continued';
        sample.ms = found.at - killedAt;
        sample.via = found.event.event_type === 'error' ? 'error/worker_lost' : 'run_started';
        if (found.event.event_type === 'run_started') sample.takenOverBy = found.event.worker_id;
      } else if (found && found.event.event_type === 'done') {
        sample.outcome = 'ended';
      }
      samples.push(sample);
      log(
        `  kill ${k}/${options.kills}: ${victim.id} (pid ${victim.process.proc.pid}) → ` +
          (sample.outcome === 'continued' ? `continued after ${(sample.ms! / 1000).toFixed(2)} s (${sample.via}${sample.takenOverBy ? ` on ${sample.takenOverBy}` : ''})` : sample.outcome === 'ended' ? 'run ended without a takeover' : `no continuation within ${options.giveUpMs / 1000} s`),
      );

      // Two workers up again, and the run over before the next kill.
      const replacement = stack.startWorker();
      const isDone = (e: EventDict) => ofRun(e) && e.event_type === 'done';
      let done = sample.outcome === 'ended' ? true : sample.outcome === 'continued' ? Boolean(await tap.waitFor(isDone, 60_000, seenBefore)) : false;
      sample.completed = sample.outcome === 'continued' && done;
      if (!done) {
        socket.emit('message', { type: 'cancel', payload: { session_id: started.event.session_id } });
        done = Boolean(await tap.waitFor(isDone, 10_000, seenBefore));
        if (!done) log(`  run ${runId}: no done even after a cancel; moving on`);
      }
      await replacement;
    } finally {
      socket.disconnect();
    }
  }
  const latencyMs = samples.filter((s) => s.outcome === 'continued').map((s) => s.ms!);
  return {
    samples,
    latencyMs,
    continued: latencyMs.length,
    timedOut: samples.filter((s) => s.outcome === 'timeout').length,
    ended: samples.filter((s) => s.outcome === 'ended').length,
    completedAfterTakeover: samples.filter((s) => s.completed).length,
  };
}
