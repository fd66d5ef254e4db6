import type { Clock } from "../../kernel/clock.js";
import type { Job } from "../../kernel/job-runner.js";
import type { UsageConfig } from "../../kernel/config.js";
import { floorTo, HOUR_MS } from "./usage-buckets.js";
import type { UsageRepository } from "./usage.repository.js";

/**
 * The job that rolls usage up (docs/usage.md): once an hour is over, its minutes are added into hours,
 * once a day is over its hours into days, and what is older than it is kept is dropped. Every instance
 * runs it; the roll-up row's lock makes one of them do each hour, and the others find it done.
 */
export class UsageRollups implements Job {
  readonly name = "usage roll-ups";
  /** The hour rolled up to, as this instance last saw it: until the next hour ends there is nothing to do. */
  private rolledUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly repository: UsageRepository,
    private readonly clock: Clock,
    private readonly retention: Pick<UsageConfig, "minuteRetentionMs" | "hourRetentionMs" | "dayRetentionMs">,
  ) {}

  async run(): Promise<void> {
    const now = this.clock.now();
    if (this.rolledUntil >= floorTo(now, HOUR_MS)) return;
    const marks = await this.repository.rollUp(now, {
      minuteMs: this.retention.minuteRetentionMs,
      hourMs: this.retention.hourRetentionMs,
      dayMs: this.retention.dayRetentionMs,
    });
    this.rolledUntil = marks.hoursUntil ?? Number.NEGATIVE_INFINITY;
  }
}
