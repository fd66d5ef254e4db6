import type { Clock } from "@flagstaff/server/dist/src/kernel/clock.js";

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
}

/**
 * A clock tests move by hand, with timers that fire only as it is moved: `advance(ms)` runs every timer
 * due by then, in the order of their times (and, for one time, of their setting). Serves the server's
 * `Clock` and the SDK's `Timers`.
 */
export class ManualClock implements Clock {
  private readonly timers = new Map<number, Timer>();
  private seq = 0;

  constructor(private ms = Date.parse("2026-11-22T10:00:00.000Z")) {}

  now(): number {
    return this.ms;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const seq = ++this.seq;
    this.timers.set(seq, { at: this.ms + Math.max(0, ms), seq, callback });
    return seq;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** How many timers are set and not fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Milliseconds until the next timer fires; undefined when none is set. */
  nextTimerIn(): number | undefined {
    const next = this.next();
    return next === undefined ? undefined : next.at - this.ms;
  }

  /** Moves the clock on by `ms`, firing the timers due on the way (each at its own time). */
  advance(ms: number): void {
    const until = this.ms + ms;
    for (let next = this.next(); next !== undefined && next.at <= until; next = this.next()) {
      this.timers.delete(next.seq);
      this.ms = Math.max(this.ms, next.at);
      next.callback();
    }
    this.ms = until;
  }

  private next(): Timer | undefined {
    let first: Timer | undefined;
    for (const timer of this.timers.values()) {
      if (!first || timer.at < first.at || (timer.at === first.at && timer.seq < first.seq)) first = timer;
    }
    return first;
  }
}
