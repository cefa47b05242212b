/**
 * A timeout that can be held: while anyone holds it the time does not run, and once the last
 * hold is released it goes on with what was left. A call that waits for a person (an
 * elicitation) holds its timeouts, so the person's time is not the call's.
 */
export class Countdown {
  private timer?: NodeJS.Timeout;
  private left: number;
  private startedAt = 0;
  private holds = 0;
  private over = false;

  /** Starts at once: `onExpire` runs once when `ms` of unheld time have passed. */
  constructor(
    private readonly ms: number,
    private readonly onExpire: () => void,
  ) {
    this.left = ms;
    this.arm();
  }

  /** Whether it ran out (or was stopped). */
  get expired(): boolean {
    return this.over;
  }

  /**
   * Stops the time until the returned function is called (each hold is released once; the time
   * runs again when no hold is left).
   */
  hold(): () => void {
    if (this.over) return () => {};
    if (this.holds++ === 0) {
      clearTimeout(this.timer);
      this.left -= Date.now() - this.startedAt;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds === 0 && !this.over) this.arm();
    };
  }

  /** Gives it its whole time again (a call that made progress); a held countdown starts it when released. */
  restart(): void {
    if (this.over) return;
    this.left = this.ms;
    if (this.holds > 0) return;
    clearTimeout(this.timer);
    this.arm();
  }

  /** Stops it for good: it never expires. */
  stop(): void {
    this.over = true;
    clearTimeout(this.timer);
  }

  private arm(): void {
    this.startedAt = Date.now();
    this.timer = setTimeout(() => {
      this.over = true;
      this.onExpire();
    }, Math.max(0, this.left));
  }
}
