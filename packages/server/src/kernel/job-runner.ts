/**
 * The one job runner (docs/architecture.md, "One job runner"): everything the service does later rather
 * than in a request (webhook deliveries, scheduled changes) is a job registered here. The runner polls
 * every job at one interval and runs a job at once when something tells it there is work (`kick`);
 * runs of one job never overlap (a kick during a run runs it once more afterwards); `stop` waits for the
 * runs in flight. Jobs keep their work in the database and claim it there (FOR UPDATE SKIP LOCKED on
 * PostgreSQL, a lease elsewhere), so any number of instances can run the same jobs, and what was due
 * while every instance was down is done by the first poll after a start. Time is the injected clock's:
 * a job reads `now` when it runs, so a test that moves a manual clock sees the work due then done at the
 * next poll.
 */

export interface Job {
  /** For the logs. */
  readonly name: string;
  /** Does what is due now. A rejection is logged; the next poll or kick runs it again. */
  run(): Promise<void>;
}

export interface JobLogger {
  warn(obj: object, msg: string): void;
}

/** A registered job: tell it there is work, or stop it. */
export interface RunningJob {
  /** Runs the job now, or once more after the run in flight. */
  kick(): void;
  /** Runs the job now and resolves when that run (and any kicked meanwhile) is over. */
  runNow(): Promise<void>;
  /** No more runs; resolves when the run in flight is over. */
  stop(): Promise<void>;
}

class JobState implements RunningJob {
  private running: Promise<void> | undefined;
  private again = false;
  stopped = false;

  constructor(
    private readonly job: Job,
    private readonly logger: JobLogger,
  ) {}

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.job
      .run()
      .catch((error) => this.logger.warn({ err: error, job: this.job.name }, `job ${this.job.name} failed; will retry`))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  async runNow(): Promise<void> {
    this.kick();
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.again = false;
    await this.running;
  }
}

export class JobRunner {
  private readonly jobs: JobState[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: JobLogger,
    private readonly pollMs: number,
  ) {}

  /** Registers a job; it runs at every poll once the runner is started. */
  add(job: Job): RunningJob {
    const state = new JobState(job, this.logger);
    this.jobs.push(state);
    if (this.timer) state.kick();
    return state;
  }

  /** Starts polling, and runs every job once now. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kickAll(), this.pollMs);
    this.timer.unref();
    this.kickAll();
  }

  /** Runs every job now (or once more after its run in flight). */
  kickAll(): void {
    for (const job of this.jobs) job.kick();
  }

  /** Runs every job now and resolves when each run (and any kicked meanwhile) is over: what a poll does, awaited. */
  async runAll(): Promise<void> {
    await Promise.all(this.jobs.map((job) => job.runNow()));
  }

  /** Stops polling and every job, waiting for the runs in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.jobs.map((job) => job.stop()));
  }
}
