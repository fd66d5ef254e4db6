import { setImmediate } from "node:timers/promises";
import { type Kysely, sql } from "kysely";
import { isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";

/** Flags updated per statement; keeps the statement well under every engine's parameter limit. */
const BATCH = 400;

/** Noted times by environment, then by flag id. */
type Noted = Map<string, Map<string, number>>;

const timeIn = (noted: Noted, environment: string, flagId: string) => noted.get(environment)?.get(flagId);

/**
 * An environment's noted times in statements of at most BATCH: those noted at one time together first
 * (an OFREP bulk evaluation notes thousands of flags at once; one value serves them all), then the rest,
 * each statement naming each flag's own time.
 */
function statementsOf(flags: Map<string, number>): [string, number][][] {
  const byTime = new Map<number, [string, number][]>();
  for (const entry of flags) {
    const same = byTime.get(entry[1]);
    if (same === undefined) byTime.set(entry[1], [entry]);
    else same.push(entry);
  }
  const statements: [string, number][][] = [];
  const mixed: [string, number][] = [];
  for (const entries of byTime.values()) {
    if (entries.length === 1) mixed.push(entries[0] as [string, number]);
    else for (let i = 0; i < entries.length; i += BATCH) statements.push(entries.slice(i, i + BATCH));
  }
  for (let i = 0; i < mixed.length; i += BATCH) statements.push(mixed.slice(i, i + BATCH));
  return statements;
}

/**
 * Coalesces `latestCheckedAt`, which each environment's configuration of a flag has: a check only notes
 * the time in memory, and `flush` writes every noted configuration in one statement per environment and
 * batch. The stored value only ever moves forward, so replicas flushing out of order cannot move it back.
 */
export class CheckRecorder {
  private pending: Noted = new Map();
  /** Being written right now: still answered by `pendingFor`, so reads never step back mid-flush. */
  private flushing: Noted = new Map();
  private running: Promise<void> | undefined;
  /**
   * The batch written last, kept until the next flush: a read that fetched its row just before that
   * write committed still answers the time it had noted, instead of the older stored one.
   */
  private written: Noted = new Map();
  private count = 0;

  /**
   * `skipLocked` (PostgreSQL): rows a write holds are skipped and written at the next flush. A flush
   * updates many configurations in one statement, and so may a write (detaching a segment from every flag
   * it is attached to): two statements that lock the same rows in different orders deadlock, and
   * PostgreSQL would fail one of them, the write's perhaps. A flush that never waits for a lock cannot be
   * part of a deadlock.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly skipLocked = false,
  ) {}

  note(environment: string, flagId: string, at: number): void {
    let flags = this.pending.get(environment);
    if (flags === undefined) {
      flags = new Map();
      this.pending.set(environment, flags);
    }
    if (!flags.has(flagId)) this.count++;
    flags.set(flagId, at);
  }

  /** The time noted for a configuration and not yet written, so reads on this instance are never behind. */
  pendingFor(environment: string, flagId: string): number | undefined {
    return (
      timeIn(this.pending, environment, flagId) ??
      timeIn(this.flushing, environment, flagId) ??
      timeIn(this.written, environment, flagId)
    );
  }

  /** Forgets a deleted flag (every environment) or, with `environment`, an environment's configurations. */
  forget(flagId: string | undefined, environment?: string): void {
    for (const noted of [this.pending, this.flushing, this.written]) {
      if (environment !== undefined && flagId === undefined) {
        if (noted === this.pending) this.count -= noted.get(environment)?.size ?? 0;
        noted.delete(environment);
        continue;
      }
      for (const [env, flags] of noted) {
        if (environment !== undefined && env !== environment) continue;
        if (flagId !== undefined && flags.delete(flagId) && noted === this.pending) this.count--;
      }
    }
  }

  get size(): number {
    return this.count;
  }

  /** Writes every noted time. Waits for a flush already under way first, so shutdown misses nothing. */
  async flush(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
    if (this.count === 0) return;
    this.running = this.write();
    try {
      await this.running;
    } finally {
      this.running = undefined;
    }
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    this.count = 0;
    this.flushing = batch;
    try {
      for (const [environment, flags] of batch) {
        for (const chunk of statementsOf(flags)) {
          // Between statements the event loop turns: a flush of 10,000 configurations (an OFREP bulk
          // evaluation notes every flag) is tens of statements, run synchronously on SQLite.
          await setImmediate();
          const at = (chunk[0] as [string, number])[1];
          const value = chunk.every((entry) => entry[1] === at)
            ? sql<string>`${isoTime(at)}`
            : sql<string>`(case flag_id ${sql.join(
                chunk.map(([id, time]) => sql`when ${id} then ${isoTime(time)}`),
                sql` `,
              )} end)`;
          const ids = chunk.map(([id]) => id);
          const update = this.db
            .updateTable("flag_configs")
            .set({
              latest_checked_at: sql<string>`case when latest_checked_at is null or latest_checked_at < ${value} then ${value} else latest_checked_at end`,
            })
            .where("environment_id", "=", environment);
          if (!this.skipLocked) {
            await update.where("flag_id", "in", ids).execute();
            continue;
          }
          const updated = await update
            .where("config_id", "in", (eb) =>
              eb
                .selectFrom("flag_configs as held")
                .select("held.config_id")
                .where("held.environment_id", "=", environment)
                .where("held.flag_id", "in", ids)
                .forUpdate()
                .skipLocked(),
            )
            .returning("flag_id")
            .execute();
          if (updated.length < ids.length) await this.keepSkipped(environment, chunk, updated, batch);
        }
      }
      this.written = batch;
    } catch (error) {
      // Put back what was not written, unless a newer check has noted a later time meanwhile.
      for (const [environment, flags] of batch) {
        for (const [id, at] of flags)
          if (timeIn(this.pending, environment, id) === undefined) this.note(environment, id, at);
      }
      throw error;
    } finally {
      this.flushing = new Map();
    }
  }

  /**
   * Notes again, for the next flush, the configurations a write held (skipped), unless a newer check
   * has noted a later time; a configuration deleted meanwhile is not noted again (it has no row to write).
   */
  private async keepSkipped(
    environment: string,
    chunk: readonly [string, number][],
    updated: readonly { flag_id: string }[],
    batch: Noted,
  ): Promise<void> {
    const done = new Set(updated.map((row) => row.flag_id));
    const skipped = chunk.filter(([id]) => !done.has(id));
    const existing = await this.db
      .selectFrom("flag_configs")
      .select("flag_id")
      .where("environment_id", "=", environment)
      .where(
        "flag_id",
        "in",
        skipped.map(([id]) => id),
      )
      .execute();
    const exists = new Set(existing.map((row) => row.flag_id));
    for (const [id, at] of skipped) {
      batch.get(environment)?.delete(id);
      if (exists.has(id) && timeIn(this.pending, environment, id) === undefined) this.note(environment, id, at);
    }
  }
}
