/** Starts `fn` after `ms`; the timer must not keep the process alive. Injected so tests fire it by hand. */
export type StartTimer = (fn: () => void, ms: number) => void;

export const unrefTimer: StartTimer = (fn, ms) => {
  setTimeout(fn, ms).unref();
};

interface Pending<T> {
  readonly item: T;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Gathers items for `batchMs` and stores them together with `store` (one call, one transaction), one
 * batch at a time: on SQLite every commit is a sync to disk, and one per delivery outcome tripled what a
 * write with a webhook cost the server. Each `add` resolves once its batch is stored, or rejects with the
 * batch's error. Items added while a batch is being stored go in the next one, stored right after it.
 */
export class OutcomeBatcher<T> {
  private readonly pending: Pending<T>[] = [];
  private flushing: Promise<void> | undefined;
  private timerSet = false;
  private hurried = false;

  constructor(
    private readonly store: (batch: readonly T[]) => Promise<void>,
    private readonly batchMs: number,
    private readonly startTimer: StartTimer = unrefTimer,
  ) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.flushing || this.timerSet) return;
      this.schedule();
    });
  }

  /** From now on, a batch is stored as soon as it can be (at shutdown: nothing left waiting on a timer). */
  hurry(): void {
    this.hurried = true;
  }

  private schedule(): void {
    this.timerSet = true;
    this.startTimer(
      () => {
        this.timerSet = false;
        this.flushing = this.flush().finally(() => {
          this.flushing = undefined;
          if (this.pending.length > 0) this.schedule();
        });
      },
      this.hurried ? 0 : this.batchMs,
    );
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0);
      try {
        await this.store(batch.map((p) => p.item));
        for (const p of batch) p.resolve();
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
  }
}
