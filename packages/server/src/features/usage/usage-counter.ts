import { USAGE_ERROR_VARIANT } from "@flagstaff/core";
import type { CheckRecorder } from "../evaluation/check-recorder.js";
import type { EvaluationCounter } from "../evaluation/checker.js";
import { MINUTE_MS } from "./usage-buckets.js";
import type { MinuteCount, UsageRepository } from "./usage.repository.js";

/** One configuration's evaluations not yet written: by minute, then by variant. */
interface Tally {
  readonly configId: string;
  readonly flagId: string;
  /** The minute `counts` is of: almost every evaluation falls in it, so most counts are one map's. */
  minute: number;
  counts: Map<string, number>;
  /** Earlier minutes' counts, when a flush comes after a minute turned. */
  earlier: MinuteCount[] | undefined;
}

/**
 * Counts the evaluations this instance answers (the check, OFREP) per configuration, variant and minute,
 * in memory, and writes them at every flush (USAGE_FLUSH_INTERVAL_MS) in one transaction. Every count
 * also notes the configuration's `latestCheckedAt` (the CheckRecorder), so both come from the same
 * evaluations. A flush that fails keeps its counts for the next one.
 */
export class UsageCounter implements EvaluationCounter {
  private pending = new Map<string, Map<string, Tally>>();
  private running: Promise<void> | undefined;
  private readonly preFlush: (() => void)[] = [];

  constructor(
    private readonly repository: UsageRepository,
    readonly recorder: CheckRecorder,
    /** Whether evaluations are counted at all (USAGE_COUNTING); latestCheckedAt is noted either way. */
    private readonly enabled = true,
  ) {}

  private tallyOf(environment: string, flagId: string, minute: number): Tally {
    let flags = this.pending.get(environment);
    if (flags === undefined) {
      flags = new Map();
      this.pending.set(environment, flags);
    }
    let tally = flags.get(flagId);
    if (tally === undefined) {
      tally = { configId: `${flagId}@${environment}`, flagId, minute, counts: new Map(), earlier: undefined };
      flags.set(flagId, tally);
    } else if (tally.minute !== minute) {
      // The minute turned since the last flush: keep the old minute's counts apart.
      tally.earlier ??= [];
      for (const [variant, count] of tally.counts)
        tally.earlier.push({ configId: tally.configId, flagId, variant, minute: tally.minute, count });
      tally.minute = minute;
      tally.counts = new Map();
    }
    return tally;
  }

  /** Counts one evaluation that answered `variant` (null: an error) at `at`. */
  count(environment: string, flagId: string, variant: string | null, at: number): void {
    this.recorder.note(environment, flagId, at);
    if (!this.enabled) return;
    const counts = this.tallyOf(environment, flagId, at - (at % MINUTE_MS)).counts;
    const key = variant ?? USAGE_ERROR_VARIANT;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }

  /** Counts `times` evaluations of each of `flagIds`, each answering its `variants` entry (OFREP's shared answers). */
  countMany(
    environment: string,
    flagIds: readonly string[],
    variants: readonly (string | null)[],
    times: number,
    at: number,
  ): void {
    const minute = at - (at % MINUTE_MS);
    for (let i = 0; i < flagIds.length; i++) {
      const flagId = flagIds[i] as string;
      this.recorder.note(environment, flagId, at);
      if (!this.enabled || times === 0) continue;
      const counts = this.tallyOf(environment, flagId, minute).counts;
      const key = variants[i] ?? USAGE_ERROR_VARIANT;
      counts.set(key, (counts.get(key) ?? 0) + times);
    }
  }

  /** Runs `fn` before every flush (OFREP's bulk answers count their shared answers then). */
  beforeFlush(fn: () => void): void {
    this.preFlush.push(fn);
  }

  /** Writes every count, then every noted `latestCheckedAt`. Waits for a flush under way first. */
  async flush(): Promise<void> {
    for (const fn of this.preFlush) fn();
    while (this.running) await this.running.catch(() => {});
    this.running = this.write();
    try {
      await this.running;
    } finally {
      this.running = undefined;
    }
    await this.recorder.flush();
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    if (batch.size === 0) return;
    this.pending = new Map();
    const counts: MinuteCount[] = [];
    for (const flags of batch.values()) {
      for (const tally of flags.values()) {
        if (tally.earlier) counts.push(...tally.earlier);
        for (const [variant, count] of tally.counts)
          counts.push({ configId: tally.configId, flagId: tally.flagId, variant, minute: tally.minute, count });
      }
    }
    try {
      await this.repository.addMinutes(counts);
    } catch (error) {
      // Kept for the next flush, added to what was counted meanwhile.
      for (const c of counts) this.add(c);
      throw error;
    }
  }

  /** Puts a count back (a failed flush's). */
  private add(c: MinuteCount): void {
    const environment = c.configId.slice(c.flagId.length + 1);
    const tally = this.pending.get(environment)?.get(c.flagId);
    if (tally === undefined || tally.minute === c.minute) {
      const counts = this.tallyOf(environment, c.flagId, c.minute).counts;
      counts.set(c.variant, (counts.get(c.variant) ?? 0) + c.count);
    } else {
      tally.earlier ??= [];
      tally.earlier.push(c);
    }
  }

  /** Forgets a deleted or archived flag's counts (its configurations are gone from the evaluations). */
  forget(flagId: string | undefined, environment?: string): void {
    this.recorder.forget(flagId, environment);
    for (const [env, flags] of this.pending) {
      if (environment !== undefined && env !== environment) continue;
      if (flagId === undefined) this.pending.delete(env);
      else flags.delete(flagId);
    }
  }
}
