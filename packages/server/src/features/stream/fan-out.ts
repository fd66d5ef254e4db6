/**
 * Work for every open stream (a change set's delivery, a heartbeat), or for each of many requests (OFREP
 * bulk answers), done in order and a few milliseconds at a time. Writing to 5,000 sockets takes about 100 ms of the event loop, and the checks that share it
 * must not wait that long: each turn does what fits in `budgetMs`, then lets the loop take other work
 * (setImmediate runs after the I/O the turn let in) and goes on. Jobs run in the order they came, so a
 * stream sees change sets in order; a stream that ended meanwhile is the job's to skip.
 */
export class FanOut<T> {
  private readonly jobs: { readonly items: readonly T[]; next: number; readonly each: (item: T) => void }[] = [];
  private running = false;
  private scheduled = false;

  /**
   * `checkEvery`: how many items run between two reads of the clock (32 for small writes, whose cost is
   * about that of reading it; 1 for work of a millisecond or so, such as an OFREP bulk answer).
   */
  constructor(
    private readonly budgetMs: number,
    private readonly checkEvery = 32,
  ) {}

  /** Runs `each` on every item, starting now when nothing is ahead of it. */
  add(items: readonly T[], each: (item: T) => void): void {
    if (items.length === 0) return;
    this.jobs.push({ items, next: 0, each });
    if (!this.running && !this.scheduled) this.run();
  }

  /** Drops the jobs not done (shutdown). */
  clear(): void {
    this.jobs.length = 0;
  }

  private readonly run = (): void => {
    this.scheduled = false;
    this.running = true;
    try {
      const deadline = performance.now() + this.budgetMs;
      for (let job = this.jobs[0]; job !== undefined; job = this.jobs[0]) {
        while (job.next < job.items.length) {
          job.each(job.items[job.next++] as T);
          // The clock is read every `checkEvery` items: reading it costs about as much as a small write.
          if (job.next % this.checkEvery === 0 && performance.now() >= deadline) {
            this.scheduled = true;
            setImmediate(this.run);
            return;
          }
        }
        this.jobs.shift();
      }
    } finally {
      this.running = false;
    }
  };
}
