import cluster, { type Worker } from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { ClusterMetricsAggregator } from '../metrics/cluster-metrics.js';
import { RestartBackoff } from './restart-backoff.js';

/**
 * DATAAGENT_WORKERS > 1: the gateway's main becomes a node:cluster primary that runs that many
 * gateway processes on one port. The primary serves nothing itself: it accepts connections and
 * hands them to the processes round robin, starts again a process that exits, collects the
 * processes' metrics for `/metrics`, and on SIGINT or SIGTERM stops them all cleanly.
 */

/** Set in the environment of the processes a primary starts: their 1-based slot. */
const PROCESS_ENV = 'DATAAGENT_GATEWAY_PROCESS';
/** The primary tells a gateway process to shut down (as SIGTERM would). */
const SHUTDOWN = 'dataagent:shutdown';

export interface GatewayClusterOptions {
  /** Gateway processes to keep running (DATAAGENT_WORKERS). */
  processes: number;
  /** The listen address, for the "gateway listening" line. */
  host: string;
  logLevel: string;
  /** Delays before a process that exited is started again. */
  backoff?: RestartBackoff;
  /** How long the processes may take to shut down before they are killed. */
  shutdownTimeoutMs?: number;
}

/** Whether this process is one of the gateway processes a cluster primary started. */
export function isGatewayClusterProcess(): boolean {
  return cluster.isWorker && process.env[PROCESS_ENV] !== undefined;
}

/** The URL a client on this host reaches the gateway at: loopback when it listens on every address. */
export function gatewayUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown}:${port}`;
}

/**
 * In a gateway process of a cluster: shuts down as on SIGTERM when the primary says so, unless
 * a signal already started the shutdown (Ctrl+C reaches every process of the terminal's group,
 * and NestJS's shutdown hook lets a second signal kill the process mid-drain).
 */
export function followPrimaryShutdown(): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (stopping = true));
  process.on('message', (message) => {
    if ((message as { type?: unknown } | null)?.type !== SHUTDOWN || stopping) return;
    stopping = true;
    process.kill(process.pid, 'SIGTERM');
  });
}

interface Slot {
  index: number;
  worker?: Worker;
  startedAt: number;
  listening: boolean;
  backoff: RestartBackoff;
  restart?: NodeJS.Timeout;
}

/** The cluster primary: starts the gateway processes and keeps them running until told to stop. */
export class GatewayPrimary {
  private readonly log: Logger;
  private readonly slots: Slot[];
  readonly metrics = new ClusterMetricsAggregator(() => this.serving());
  private stopping: { signal: NodeJS.Signals | null; exitCode: number } | null = null;
  private announced = false;

  constructor(private readonly options: GatewayClusterOptions) {
    this.log = pino({ level: options.logLevel, base: { service: 'gateway-primary', pid: process.pid } });
    this.slots = Array.from({ length: options.processes }, (_, index) => ({
      index: index + 1,
      startedAt: 0,
      listening: false,
      backoff: options.backoff ?? new RestartBackoff(),
    }));
  }

  /** Starts every gateway process; prints `{"msg":"gateway listening",...}` once all of them listen. */
  start(): void {
    // Linux's default, said out loud: the primary accepts and deals connections out in turn,
    // instead of the processes racing for accept() (which loads one of them far more).
    cluster.schedulingPolicy = cluster.SCHED_RR;
    cluster.on('message', (worker, message) => this.metrics.handle(worker, message));
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => this.stop(signal));
    for (const slot of this.slots) this.fork(slot);
  }

  /**
   * Stops every gateway process: each drains as a lone gateway does on SIGTERM. A second
   * signal, or the shutdown timeout, kills what is left. The primary then ends with the signal
   * it got (or `exitCode` when it stops on its own).
   */
  stop(signal: NodeJS.Signals | null, exitCode = 0): void {
    if (this.stopping) {
      if (signal) this.killAll('a second signal');
      return;
    }
    this.stopping = { signal, exitCode };
    this.log.info({ signal }, 'stopping the gateway processes');
    for (const slot of this.slots) clearTimeout(slot.restart);
    for (const worker of this.live()) worker.send({ type: SHUTDOWN }, undefined, () => undefined);
    setTimeout(() => this.killAll('the shutdown timeout'), this.options.shutdownTimeoutMs ?? 30_000).unref();
    this.finishIfDone();
  }

  private fork(slot: Slot): void {
    slot.restart = undefined;
    slot.listening = false;
    slot.startedAt = Date.now();
    const worker = cluster.fork({ [PROCESS_ENV]: String(slot.index) });
    slot.worker = worker;
    this.metrics.processes.set(this.serving().length);
    worker.once('listening', (address: AddressInfo) => {
      slot.listening = true;
      this.metrics.processes.set(this.serving().length);
      if (!this.announced && this.slots.every((s) => s.listening)) {
        this.announced = true;
        // The line scripts and tests wait for, as a lone gateway prints it.
        console.log(JSON.stringify({ msg: 'gateway listening', url: gatewayUrl(this.options.host, address.port), port: address.port, processes: this.slots.length, pid: process.pid }));
      }
    });
    worker.once('exit', (code: number | null, signal: NodeJS.Signals | null) => this.exited(slot, worker, code, signal));
  }

  private exited(slot: Slot, worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    if (slot.worker === worker) slot.worker = undefined;
    this.metrics.forget(worker);
    this.metrics.processes.set(this.serving().length);
    const pid = worker.process.pid;
    if (this.stopping) return this.finishIfDone();
    if (!this.announced) {
      // A process that cannot start (the database unreachable, the port taken) would fail again:
      // the whole gateway fails to start, as a lone one does, and its supervisor decides.
      this.log.error({ slot: slot.index, child_pid: pid, code, signal }, 'a gateway process failed to start; stopping the others');
      return this.stop(null, 1);
    }
    const delayMs = slot.backoff.next(Date.now() - slot.startedAt);
    this.log.warn({ slot: slot.index, child_pid: pid, code, signal, restart_in_ms: delayMs }, 'a gateway process exited; starting another');
    this.metrics.restarts.inc();
    slot.restart = setTimeout(() => this.fork(slot), delayMs);
  }

  private finishIfDone(): void {
    if (!this.stopping || this.live().length > 0) return;
    const { signal, exitCode } = this.stopping;
    this.log.info('every gateway process has stopped');
    if (!signal) process.exit(exitCode);
    // Ends the way a lone gateway ends on the same signal.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }

  private killAll(why: string): void {
    const left = this.live();
    if (left.length === 0) return;
    this.log.warn({ child_pids: left.map((w) => w.process.pid), why }, 'killing the gateway processes still running');
    for (const worker of left) worker.process.kill('SIGKILL');
  }

  private live(): Worker[] {
    return this.slots.flatMap((s) => (s.worker && !s.worker.isDead() ? [s.worker] : []));
  }

  /** Processes that listen and can answer: the ones metrics are collected from. */
  private serving(): Worker[] {
    return this.slots.flatMap((s) => (s.worker && s.listening && s.worker.isConnected() ? [s.worker] : []));
  }
}
