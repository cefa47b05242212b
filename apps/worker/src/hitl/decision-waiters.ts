/** Runs waiting for HITL decisions in this worker, woken by control messages. */
export class DecisionWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Registers a wake-up for a request; returns a function that removes it. */
  add(requestId: string, wake: () => void): () => void {
    let set = this.waiters.get(requestId);
    if (!set) this.waiters.set(requestId, (set = new Set()));
    set.add(wake);
    return () => {
      set!.delete(wake);
      if (set!.size === 0) this.waiters.delete(requestId);
    };
  }

  wake(requestId: string): void {
    for (const wake of this.waiters.get(requestId) ?? []) wake();
  }

  get size(): number {
    return this.waiters.size;
  }
}
