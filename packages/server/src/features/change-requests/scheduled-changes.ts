import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import type { Job, JobLogger } from "../../kernel/job-runner.js";
import { SCHEDULER } from "../../write-path/domain-events.js";
import { claimDueRequests, retryLater } from "./change-request.repository.js";
import type { ChangeRequestService } from "./change-request.service.js";

/** How many due requests one claim takes. */
const CLAIM_LIMIT = 20;
/**
 * How long an instance holds a claimed request: far longer than applying one takes, so a lease lapses only
 * when its instance died (another then applies the request; the write's own check of the state keeps
 * that to once).
 */
const LEASE_MS = 60_000;
/** The wait after a failed attempt: 10 s, doubling, at most an hour. */
const retryDelay = (attempts: number) => Math.min(3_600_000, 10_000 * 2 ** Math.max(0, attempts - 1));

export interface ScheduledChangesOptions {
  /** PostgreSQL: due requests are claimed with FOR UPDATE SKIP LOCKED. */
  readonly postgres: boolean;
  /** Attempts before a request the database keeps failing is marked failed. */
  readonly maxAttempts: number;
}

/**
 * The job that applies scheduled change requests at their time (docs/change-requests.md, "Scheduled
 * changes"). Each run claims the requests due by the clock's now under a lease and applies each in its own
 * write, which reads the request again after taking the project's lock and applies it only if it is still
 * scheduled under this lease: exactly once across instances, even when a lease lapses. A request due while
 * every instance was down is applied by the first run after a start. The approvals are counted again at
 * the time: a request no longer approved then fails, with the reason. An attempt the database fails is
 * tried again later, at most `maxAttempts` times.
 */
export class ScheduledChanges implements Job {
  readonly name = "scheduled-changes";

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly service: ChangeRequestService,
    private readonly logger: JobLogger,
    private readonly options: ScheduledChangesOptions,
  ) {}

  async run(): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      const claimed = await claimDueRequests(this.db, {
        now: isoTime(now),
        leaseUntil: isoTime(now + LEASE_MS),
        limit: CLAIM_LIMIT,
        skipLocked: this.options.postgres,
      });
      for (const request of claimed) {
        try {
          await this.service.applyScheduled(SCHEDULER, request.projectId, request.id, request.lease);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          this.logger.warn({ err: error, changeRequest: request.id }, "could not apply a scheduled change request");
          await this.afterFailure(request, reason).catch((recording) =>
            this.logger.warn({ err: recording, changeRequest: request.id }, "could not record a failed attempt"),
          );
        }
      }
      if (claimed.length < CLAIM_LIMIT) return;
    }
  }

  private async afterFailure(
    request: { id: string; projectId: string; attempts: number; lease: string },
    reason: string,
  ): Promise<void> {
    if (request.attempts >= this.options.maxAttempts) {
      await this.service.giveUp(
        SCHEDULER,
        request.projectId,
        request.id,
        request.lease,
        `${request.attempts} attempts failed; the last: ${reason}`,
      );
      return;
    }
    const now = this.clock.now();
    await retryLater(this.db, request.id, request.lease, {
      nextAttemptAt: isoTime(now + retryDelay(request.attempts)),
      reason: `attempt ${request.attempts} failed: ${reason}; trying again`,
      at: isoTime(now),
    });
  }
}
