import type { DoneEventDict, EventDict } from '#core/events/execution-event.js';

/** How a wait for a run's `done` ended: the `done` itself, the timeout, or the caller gave up (`signal`). */
export type DoneWait = { outcome: 'done'; done: DoneEventDict } | { outcome: 'timeout' } | { outcome: 'aborted' };

/**
 * Follows a run until its `done`, for at most `timeoutMs` once following has started, or until
 * `signal` aborts (the client went away). Following has stopped by the time this resolves.
 * @param follow starts following the run from its first event (RunsService.follow); returns the function that stops it.
 * @param onEvent hears every event as it comes, the `done` included.
 * @throws what `follow` throws.
 */
export async function waitForDone(
  follow: (listener: (event: EventDict) => void) => Promise<() => void>,
  onEvent: (event: EventDict) => void,
  { timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal },
): Promise<DoneWait> {
  if (signal?.aborted) return { outcome: 'aborted' };
  let settle!: (wait: DoneWait) => void;
  const settled = new Promise<DoneWait>((resolve) => (settle = resolve));
  const abort = () => settle({ outcome: 'aborted' });
  signal?.addEventListener('abort', abort, { once: true });
  let stop: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    stop = await follow((event) => {
      onEvent(event);
      if (event.event_type === 'done') settle({ outcome: 'done', done: event });
    });
    timer = setTimeout(() => settle({ outcome: 'timeout' }), timeoutMs);
    return await settled;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abort);
    stop?.();
  }
}
