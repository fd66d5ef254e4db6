import type { FlagKind, StaleReason } from "@flagstaff/core";
import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import type { Job } from "../../kernel/job-runner.js";
import type { Writes } from "../../write-path/unit-of-work.js";
import { type DomainEvent, STALE_RULES } from "../../write-path/domain-events.js";
import type { UsageRepository } from "../usage/usage.repository.js";
import { DAY_MS, floorTo } from "../usage/usage-buckets.js";
import { type StaleSettings, type Staleness, staleness } from "../flags/stale-rules.js";

/** A flag whose stale state moves. */
interface Finding {
  readonly id: string;
  readonly name: string;
  readonly was: StaleReason | null;
  readonly now: Staleness | null;
}

/**
 * The job that applies the stale rules (stale-rules.ts) to every flag not archived, every
 * STALE_CHECK_INTERVAL_MS: a flag found stale is marked so with the reason, in one write per project
 * that records a `flag.stale` event (history, webhooks) for each; a flag that stops being stale (evaluated
 * again, answering another variant) is marked so, without an event. The marks are compared in the
 * update itself, so two instances running it at once record each event once.
 */
export class StaleDetection implements Job {
  readonly name = "stale flags";
  private lastRun = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: Writes,
    private readonly usage: UsageRepository,
    private readonly clock: Clock,
    private readonly settings: StaleSettings & { readonly checkIntervalMs: number },
  ) {}

  async run(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastRun < this.settings.checkIntervalMs) return;
    await this.detect(now);
    this.lastRun = now;
  }

  /** Applies the rules now (the job's run, and tests'). */
  async detect(now: number): Promise<void> {
    const byProject = new Map<string, Finding[]>();
    for (const [projectId, finding] of await this.findings(now)) {
      const list = byProject.get(projectId) ?? [];
      list.push(finding);
      byProject.set(projectId, list);
    }
    for (const [projectId, findings] of byProject) await this.record(projectId, findings, now);
  }

  private async findings(now: number): Promise<[string, Finding][]> {
    const flags = await this.db
      .selectFrom("flags")
      .select(["id", "project_id", "name", "kind", "permanent", "created_at", "stale_reason"])
      .where("archived_at", "is", null)
      .execute();
    const lastRows = await this.db
      .selectFrom("flag_configs")
      .select(["flag_id", (eb) => eb.fn.max("latest_checked_at").as("last")])
      .groupBy("flag_id")
      .execute();
    const last = new Map(lastRows.map((row) => [row.flag_id, row.last === null ? null : Date.parse(String(row.last))]));
    const marks = await this.usage.watermarks();
    // From the start of the window's first day (UTC): days are kept whole, so the window is read whole.
    const start = floorTo(now - this.settings.staleAfterMs, DAY_MS);
    const totals = await this.usage.variantTotals(this.db, start, now + 1, marks);
    // Evaluated when the window opened: what one variant "for the whole window" needs.
    const opening = await this.usage.variantTotals(this.db, start, start + DAY_MS, marks);
    const prerequisites = await this.prerequisitesInUse();
    const found: [string, Finding][] = [];
    for (const flag of flags) {
      const next = staleness(
        {
          kind: flag.kind as FlagKind,
          permanent: Number(flag.permanent) === 1,
          createdAt: Date.parse(flag.created_at),
          lastEvaluatedAt: last.get(flag.id) ?? null,
          variants: totals.get(flag.id),
          evaluatedAtWindowStart: opening.has(flag.id),
          prerequisiteOfAnother: prerequisites.has(`${flag.project_id}\u0000${flag.name}`),
        },
        now,
        this.settings,
      );
      const was = flag.stale_reason as StaleReason | null;
      if ((next?.reason ?? null) !== was)
        found.push([flag.project_id, { id: flag.id, name: flag.name, was, now: next }]);
    }
    return found;
  }

  /**
   * The flags another flag not archived names as a prerequisite, in any environment, as project and name:
   * they are evaluated with that flag (the engine reads them), not asked for by name, so their own counts
   * say nothing of whether they are used.
   */
  private async prerequisitesInUse(): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom("flag_configs")
      .innerJoin("flags", "flags.id", "flag_configs.flag_id")
      .select(["flags.project_id", "flag_configs.prerequisites"])
      .where("flags.archived_at", "is", null)
      .where("flag_configs.prerequisites", "is not", null)
      .execute();
    const named = new Set<string>();
    for (const row of rows) {
      for (const prerequisite of JSON.parse(row.prerequisites as string) as { flag: string }[])
        named.add(`${row.project_id}\u0000${prerequisite.flag}`);
    }
    return named;
  }

  /**
   * One project's findings: flags no longer stale are unmarked, and stale flags whose reason moved take
   * the new one, without an event; flags found stale are marked in one write with their events.
   */
  private async record(projectId: string, findings: readonly Finding[], now: number): Promise<void> {
    const since = isoTime(now);
    for (const finding of findings.filter((f) => f.was !== null)) {
      await this.db
        .updateTable("flags")
        .set(finding.now === null ? { stale_reason: null, stale_since: null } : { stale_reason: finding.now.reason })
        .where("id", "=", finding.id)
        .where("stale_reason", "=", finding.was)
        .execute();
    }
    const marked = findings.filter((f) => f.was === null && f.now !== null);
    if (marked.length === 0) return;
    await this.work.write(STALE_RULES, projectId, async (trx) => {
      const events: DomainEvent[] = [];
      for (const finding of marked) {
        const staleness = finding.now as Staleness;
        // Only if it is still as it was read: another instance may have marked it meanwhile.
        const result = await trx
          .updateTable("flags")
          .set({ stale_reason: staleness.reason, stale_since: since })
          .where("id", "=", finding.id)
          .where("archived_at", "is", null)
          .where("stale_reason", "is", null)
          // Made permanent since it was read: never stale.
          .where("permanent", "=", 0)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) continue;
        events.push({
          type: "flag.stale",
          projectId,
          target: { kind: "flag", id: finding.id, name: finding.name },
          before: null,
          after: { reason: staleness.reason, since, detail: staleness.detail },
        });
      }
      return { result: undefined, events };
    });
  }
}
