import type { UsageStep } from "@flagstaff/core";
import { type Kysely, sql, type Transaction } from "kysely";
import { isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { DAY_MS, floorTo, HOUR_MS } from "./usage-buckets.js";

// Where usage counts live (docs/usage.md): one row per configuration, granularity, bucket and variant.
// Counts arrive as minutes; the roll-up adds complete hours of minutes into hours and complete days of
// hours into days, and `usage_rollups` says up to where. Every read of a range takes each part of it
// from the finest rows that still hold it all (days before days_until, hours before hours_until, minutes
// after), so a total never depends on whether the roll-up has run: a count is in exactly one of them.

type Executor = Kysely<Database> | Transaction<Database>;
export type Granularity = "minute" | "hour" | "day";

/** A count to add: evaluations of a configuration that answered `variant` in the minute starting `minute`. */
export interface MinuteCount {
  readonly configId: string;
  readonly flagId: string;
  readonly variant: string;
  readonly minute: number;
  readonly count: number;
}

export interface Watermarks {
  /** Hours before this (ms) are rolled up into hours; null: none yet. */
  readonly hoursUntil: number | null;
  readonly daysUntil: number | null;
}

/** A stored count, read back. */
export interface UsageRow {
  readonly bucket: number;
  readonly variant: string;
  readonly count: number;
}

/** Rows per insert statement: well under every engine's parameter limit (6 columns each). */
const BATCH = 500;

const parse = (value: string | null): number | null => (value === null ? null : Date.parse(value));

async function readWatermarks(db: Executor, lock?: "share" | "update", postgres = false): Promise<Watermarks> {
  let query = db.selectFrom("usage_rollups").select(["hours_until", "days_until"]).where("id", "=", 1);
  if (postgres && lock === "share") query = query.forShare();
  if (postgres && lock === "update") query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return { hoursUntil: parse(row?.hours_until ?? null), daysUntil: parse(row?.days_until ?? null) };
}

/** Adds counts into rows of one granularity, in statements of BATCH; rows of one key are added first. */
async function addRows(
  trx: Transaction<Database>,
  granularity: Granularity,
  counts: Iterable<{ configId: string; flagId: string; variant: string; bucket: number; count: number }>,
): Promise<void> {
  const merged = new Map<
    string,
    { config_id: string; flag_id: string; bucket_at: string; variant: string; count: number }
  >();
  for (const c of counts) {
    const key = `${c.configId}\u0000${c.bucket}\u0000${c.variant}`;
    const row = merged.get(key);
    if (row) row.count += c.count;
    else
      merged.set(key, {
        config_id: c.configId,
        flag_id: c.flagId,
        bucket_at: isoTime(c.bucket),
        variant: c.variant,
        count: c.count,
      });
  }
  const rows = [...merged.values()].map((row) => ({ ...row, granularity }));
  for (let i = 0; i < rows.length; i += BATCH) {
    await trx
      .insertInto("flag_usage")
      .values(rows.slice(i, i + BATCH))
      .onConflict((oc) =>
        oc
          .columns(["config_id", "granularity", "bucket_at", "variant"])
          .doUpdateSet({ count: sql`flag_usage.count + excluded.count` }),
      )
      .execute();
  }
}

/**
 * Which rows hold which part of [from, to) for a series of `step`: the coarsest rows that still fit the
 * step, for the part of the range they hold (the series, and the stale rules by day). Each count is in exactly one of them.
 */
export function sourcesOf(
  step: UsageStep,
  from: number,
  to: number,
  marks: Watermarks,
): [Granularity, number, number][] {
  if (step === "minute") return [["minute", from, to]];
  const hoursUntil = marks.hoursUntil ?? Number.NEGATIVE_INFINITY;
  if (step === "hour")
    return [
      ["hour", from, Math.min(to, hoursUntil)],
      ["minute", Math.max(from, hoursUntil), to],
    ];
  const daysUntil = Math.min(marks.daysUntil ?? Number.NEGATIVE_INFINITY, hoursUntil);
  return [
    ["day", from, Math.min(to, daysUntil)],
    ["hour", Math.max(from, daysUntil), Math.min(to, hoursUntil)],
    ["minute", Math.max(from, hoursUntil), to],
  ];
}

export class UsageRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly postgres: boolean,
  ) {}

  /**
   * Adds minute counts in one transaction, leaving out those of configurations that no longer exist. A
   * minute of an hour already rolled up is added to that hour too (and to its day, likewise), so late
   * counts (an SDK's report retried after an outage) keep every total. The roll-up's row is read under a
   * share lock (PostgreSQL): a roll-up moving it waits for this, and this for it.
   */
  async addMinutes(
    counts: readonly MinuteCount[],
    report?: { readonly id: string; readonly at: number },
  ): Promise<number | "duplicate"> {
    if (counts.length === 0 && report === undefined) return 0;
    return this.db.transaction().execute(async (trx) => {
      if (report !== undefined) {
        // A report sent again (its answer was lost on the way) is recorded once.
        const recorded = await trx
          .insertInto("usage_reports")
          .values({ id: report.id, received_at: isoTime(report.at) })
          .onConflict((oc) => oc.column("id").doNothing())
          .executeTakeFirst();
        if (Number(recorded.numInsertedOrUpdatedRows ?? 0) === 0) return "duplicate";
      }
      if (counts.length === 0) return 0;
      const marks = await readWatermarks(trx, "share", this.postgres);
      const ids = [...new Set(counts.map((c) => c.configId))];
      const existing = new Set<string>();
      for (let i = 0; i < ids.length; i += BATCH) {
        const rows = await trx
          .selectFrom("flag_configs")
          .select("config_id")
          .where("config_id", "in", ids.slice(i, i + BATCH))
          .execute();
        for (const row of rows) existing.add(row.config_id);
      }
      const kept = counts.filter((c) => existing.has(c.configId));
      await addRows(
        trx,
        "minute",
        kept.map((c) => ({ ...c, bucket: c.minute })),
      );
      const { hoursUntil, daysUntil } = marks;
      if (hoursUntil !== null) {
        const late = kept.filter((c) => c.minute < hoursUntil);
        await addRows(
          trx,
          "hour",
          late.map((c) => ({ ...c, bucket: floorTo(c.minute, HOUR_MS) })),
        );
        if (daysUntil !== null) {
          await addRows(
            trx,
            "day",
            late.filter((c) => c.minute < daysUntil).map((c) => ({ ...c, bucket: floorTo(c.minute, DAY_MS) })),
          );
        }
      }
      return kept.length;
    });
  }

  watermarks(): Promise<Watermarks> {
    return readWatermarks(this.db);
  }

  /**
   * Rolls complete hours of minutes into hours (up to the hour of `now`) and complete days of hours into
   * days, then drops minutes and hours older than they are kept (only those already rolled up) and days
   * older than `dayRetentionMs` (0: kept for ever). One transaction, under the roll-up row's lock.
   */
  async rollUp(now: number, retention: { minuteMs: number; hourMs: number; dayMs: number }): Promise<Watermarks> {
    return this.db.transaction().execute(async (trx) => {
      const marks = await readWatermarks(trx, "update", this.postgres);
      const hoursTarget = floorTo(now, HOUR_MS);
      const hoursFrom = marks.hoursUntil ?? (await this.earliest(trx, "minute", HOUR_MS)) ?? hoursTarget;
      if (hoursFrom < hoursTarget)
        await this.rollInto(trx, "minute", "hour", hoursFrom, hoursTarget, 13, ":00:00.000Z");
      const hoursUntil = Math.max(hoursFrom, hoursTarget);
      const daysTarget = floorTo(hoursUntil, DAY_MS);
      const daysFrom = marks.daysUntil ?? (await this.earliest(trx, "hour", DAY_MS)) ?? daysTarget;
      if (daysFrom < daysTarget) await this.rollInto(trx, "hour", "day", daysFrom, daysTarget, 10, "T00:00:00.000Z");
      const daysUntil = Math.max(daysFrom, daysTarget);
      await trx
        .updateTable("usage_rollups")
        .set({ hours_until: isoTime(hoursUntil), days_until: isoTime(daysUntil) })
        .where("id", "=", 1)
        .execute();
      await this.prune(trx, "minute", Math.min(hoursUntil, now - retention.minuteMs));
      // A report older than the minutes kept could not be counted again anyway.
      await trx
        .deleteFrom("usage_reports")
        .where("received_at", "<", isoTime(now - retention.minuteMs))
        .execute();
      await this.prune(trx, "hour", Math.min(daysUntil, now - retention.hourMs));
      if (retention.dayMs > 0) await this.prune(trx, "day", now - retention.dayMs);
      return { hoursUntil, daysUntil };
    });
  }

  /** The earliest bucket of a granularity, rounded down to `stepMs`; null when there is none. */
  private async earliest(trx: Executor, granularity: Granularity, stepMs: number): Promise<number | null> {
    const row = await trx
      .selectFrom("flag_usage")
      .select((eb) => eb.fn.min("bucket_at").as("first"))
      .where("granularity", "=", granularity)
      .executeTakeFirst();
    const first = row?.first;
    return first === null || first === undefined ? null : floorTo(Date.parse(String(first)), stepMs);
  }

  /**
   * Adds the rows of `from` granularity in [start, end) into rows of `into`, whose bucket is the ISO
   * text's first `keep` characters (the hour, the day) and `suffix`.
   */
  private async rollInto(
    trx: Transaction<Database>,
    from: Granularity,
    into: Granularity,
    start: number,
    end: number,
    keep: number,
    suffix: string,
  ): Promise<void> {
    // The bucket's expression as literals: PostgreSQL matches the select's and the grouping's as written.
    const bucket = sql`substr(bucket_at, 1, ${sql.lit(keep)}) || ${sql.lit(suffix)}`;
    await sql`insert into flag_usage (config_id, flag_id, granularity, bucket_at, variant, count)
      select config_id, flag_id, ${sql.lit(into)}, ${bucket}, variant, sum(count)
      from flag_usage
      where granularity = ${from} and bucket_at >= ${isoTime(start)} and bucket_at < ${isoTime(end)}
      group by config_id, flag_id, ${bucket}, variant
      on conflict (config_id, granularity, bucket_at, variant) do update set count = flag_usage.count + excluded.count`.execute(
      trx,
    );
  }

  private async prune(trx: Transaction<Database>, granularity: Granularity, before: number): Promise<void> {
    await trx
      .deleteFrom("flag_usage")
      .where("granularity", "=", granularity)
      .where("bucket_at", "<", isoTime(before))
      .execute();
  }

  /** A configuration's rows of one granularity in [from, to). */
  async rows(configId: string, granularity: Granularity, from: number, to: number): Promise<UsageRow[]> {
    if (from >= to) return [];
    const rows = await this.db
      .selectFrom("flag_usage")
      .select(["bucket_at", "variant", "count"])
      .where("config_id", "=", configId)
      .where("granularity", "=", granularity)
      .where("bucket_at", ">=", isoTime(from))
      .where("bucket_at", "<", isoTime(to))
      .execute();
    return rows.map((row) => ({ bucket: Date.parse(row.bucket_at), variant: row.variant, count: Number(row.count) }));
  }

  /** Configurations' rows of one granularity in [from, to), by configuration id (the list's sparklines). */
  async rowsOf(configIds: readonly string[], granularity: Granularity, from: number, to: number) {
    if (from >= to || configIds.length === 0) return [];
    const rows = await this.db
      .selectFrom("flag_usage")
      .select(["config_id", "bucket_at", "count"])
      .where("config_id", "in", configIds)
      .where("granularity", "=", granularity)
      .where("bucket_at", ">=", isoTime(from))
      .where("bucket_at", "<", isoTime(to))
      .execute();
    return rows.map((row) => ({
      configId: row.config_id,
      bucket: Date.parse(row.bucket_at),
      count: Number(row.count),
    }));
  }

  /**
   * Evaluations in [from, to) by flag and variant, every environment added up, of every flag: days,
   * hours and minutes each for the part of the range they hold (the stale rules).
   */
  async variantTotals(
    executor: Executor,
    from: number,
    to: number,
    marks: Watermarks,
  ): Promise<Map<string, Map<string, number>>> {
    const totals = new Map<string, Map<string, number>>();
    for (const [granularity, start, end] of sourcesOf("day", from, to, marks)) {
      if (start >= end) continue;
      let query = executor
        .selectFrom("flag_usage")
        .select(["flag_id", "variant", (eb) => eb.fn.sum<number | string>("count").as("total")])
        .where("granularity", "=", granularity)
        .where("bucket_at", ">=", isoTime(start))
        .groupBy(["flag_id", "variant"]);
      query = query.where("bucket_at", "<", isoTime(end));
      for (const row of await query.execute()) {
        let variants = totals.get(row.flag_id);
        if (!variants) {
          variants = new Map();
          totals.set(row.flag_id, variants);
        }
        variants.set(row.variant, (variants.get(row.variant) ?? 0) + Number(row.total));
      }
    }
    return totals;
  }
}
