import { type Kysely, sql } from "kysely";
import { isoTime } from "../../clock.js";
import type { Database } from "../../db/schema.js";

/** Flags updated per statement; keeps the statement well under every engine's parameter limit. */
const BATCH = 400;

/**
 * Coalesces `latestCheckedAt`: a check only notes the time in memory, and `flush` writes every noted
 * flag in one statement per batch. The stored value only ever moves forward, so replicas flushing
 * out of order cannot move it back.
 */
export class CheckRecorder {
  private pending = new Map<string, number>();
  /** Being written right now: still answered by `pendingFor`, so reads never step back mid-flush. */
  private flushing = new Map<string, number>();
  private running: Promise<void> | undefined;
  /**
   * The batch written last, kept until the next flush: a read that fetched its row just before that
   * write committed still answers the time it had noted, instead of the older stored one.
   */
  private written = new Map<string, number>();

  constructor(private readonly db: Kysely<Database>) {}

  note(flagId: string, at: number): void {
    this.pending.set(flagId, at);
  }

  /** The time noted for a flag and not yet written, so reads on this instance are never behind. */
  pendingFor(flagId: string): number | undefined {
    return this.pending.get(flagId) ?? this.flushing.get(flagId) ?? this.written.get(flagId);
  }

  forget(flagId: string): void {
    this.pending.delete(flagId);
    this.flushing.delete(flagId);
    this.written.delete(flagId);
  }

  get size(): number {
    return this.pending.size;
  }

  /** Writes every noted time. Waits for a flush already under way first, so shutdown misses nothing. */
  async flush(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
    if (this.pending.size === 0) return;
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
    this.flushing = batch;
    const entries = [...batch];
    try {
      for (let i = 0; i < entries.length; i += BATCH) {
        const chunk = entries.slice(i, i + BATCH);
        const cases = sql.join(
          chunk.map(([id, at]) => sql`when ${id} then ${isoTime(at)}`),
          sql` `,
        );
        const value = sql<string>`(case id ${cases} end)`;
        await this.db
          .updateTable("flags")
          .set({
            latest_checked_at: sql<string>`case when latest_checked_at is null or latest_checked_at < ${value} then ${value} else latest_checked_at end`,
          })
          .where(
            "id",
            "in",
            chunk.map(([id]) => id),
          )
          .execute();
      }
      this.written = batch;
    } catch (error) {
      // Put back what was not written, unless a newer check has noted a later time meanwhile.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      throw error;
    } finally {
      this.flushing = new Map();
    }
  }
}
