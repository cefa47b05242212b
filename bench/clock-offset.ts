import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { epochNow } from './clock.js';

export interface ClockOffset {
  /** Another Node process's `timeOrigin + now()` minus ours, at the same instant. */
  offsetMs: number;
  /** Round trip of the probe the offset was read from (its uncertainty is half of this). */
  rttMs: number;
}

const CHILD = `process.on('message', () => process.send(performance.timeOrigin + performance.now()));`;

/**
 * Checks that stamps taken in another process can be subtracted from ours: a fresh Node child
 * answers IPC probes with its clock; the probe with the shortest round trip gives the offset
 * (child clock minus the midpoint of the probe). Node derives `timeOrigin` from the wall clock
 * at process start, so two processes agree unless the wall clock was stepped in between.
 *
 * @param probes Round trips to try.
 */
export async function measureClockOffset(probes = 200): Promise<ClockOffset> {
  const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    let best: ClockOffset = { offsetMs: NaN, rttMs: Infinity };
    for (let i = 0; i < probes; i++) {
      const sent = epochNow();
      const reply = once(child, 'message');
      child.send(i);
      const [childClock] = (await reply) as [number];
      const received = epochNow();
      if (received - sent < best.rttMs) best = { offsetMs: childClock - (sent + received) / 2, rttMs: received - sent };
    }
    return best;
  } finally {
    child.kill('SIGTERM');
  }
}
