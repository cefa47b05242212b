import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** What {@link untilLoopbackUp} saw: the address, the process gone, an unreadable namespace, or nothing in time. */
export type LoopbackWait = 'up' | 'gone' | 'unreadable' | 'timeout';

/**
 * Resolves once the network namespace of process `pid` has 127.0.0.1, read from
 * `/proc/<pid>/net/fib_trie`.
 *
 * Why: bubblewrap's child adds that address itself (RTM_NEWADDR with NLM_F_EXCL) after it has
 * reported its pid. slirp4netns brings `lo` up as well, and the kernel then adds 127.0.0.1 on its
 * own; a slirp4netns that gets there first makes bubblewrap's request fail with EEXIST, and the
 * sandbox dies with "loopback: Failed RTM_NEWADDR" (and a stale errno). So slirp4netns waits.
 */
export async function untilLoopbackUp(pid: number, timeoutMs = 10_000): Promise<LoopbackWait> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, 20)) {
    try {
      if (/\b127\.0\.0\.1\b/.test(await readFile(`/proc/${pid}/net/fib_trie`, 'utf8'))) return 'up';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ESRCH') return 'gone';
      return 'unreadable';
    }
    if (Date.now() >= deadline) return 'timeout';
    await sleep(pause);
  }
}
