import { setTimeout as sleep } from 'node:timers/promises';

export interface PacedBurstsOptions {
  /** Sends in all. */
  total: number;
  /** Sends started together. */
  burst: number;
  /** Pause between the starts of two bursts. */
  everyMs: number;
}

/**
 * Starts `send(i)` for i = 0…total-1 in bursts of `burst` every `everyMs`, without waiting for
 * one burst to finish before the next starts (an open loop, like independent clients), and
 * resolves when every send has settled.
 *
 * @throws the first send's error, after all have settled.
 */
export async function pacedBursts(options: PacedBurstsOptions, send: (index: number) => Promise<unknown>): Promise<void> {
  const inFlight: Array<Promise<unknown>> = [];
  for (let start = 0; start < options.total; start += options.burst) {
    for (let i = start; i < Math.min(options.total, start + options.burst); i++) inFlight.push(send(i));
    if (start + options.burst < options.total) await sleep(options.everyMs);
  }
  const results = await Promise.allSettled(inFlight);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}
