import { USAGE_ERROR_VARIANT, USAGE_REPORT_MAX_ENTRIES } from "@flagstaff/core";
import type { UsageCount } from "@flagstaff/core/schemas";
import type { FetchLike } from "./http.js";
import type { Timers } from "./timers.js";

const MINUTE_MS = 60_000;

/** One minute's counts: by flag, then by variant. */
type MinuteCounts = Map<string, Map<string, number>>;

export interface UsageReporterOptions {
  /** `POST …/projects/{projectId}/usage`. */
  readonly url: string;
  readonly fetch: FetchLike;
  readonly headers: () => Record<string, string>;
  readonly timers: Timers;
  /** Between reports (default 60000). */
  readonly intervalMs: number;
  /** Told when a report fails (it is kept and sent with the next one, unless the server refused it for good). */
  readonly onError: (error: Error) => void;
}

/**
 * Counts a local evaluator's evaluations per flag, variant and minute, in memory, and reports them
 * (`POST /projects/{projectId}/usage`, docs/usage.md) every `intervalMs` and when closed. Counting is two
 * map lookups and an increment: an evaluation never waits for a report. A report that fails on the way
 * (the network, a 5xx, a 429) is kept and sent again with the next one; one the server refuses for good
 * (any other 4xx: a revoked key) is dropped, as sending it again could not help. At most
 * USAGE_REPORT_MAX_ENTRIES entries are kept: past that, the oldest minutes go first.
 */
export class UsageReporter {
  /** The minute `current` counts. */
  private minute = Number.NaN;
  private current: MinuteCounts = new Map();
  /** Earlier minutes not reported yet, oldest first. */
  private earlier: { minute: number; counts: MinuteCounts }[] = [];
  private timer: unknown;
  private sending: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: UsageReporterOptions) {
    this.arm();
  }

  /** Counts one evaluation of `flag` that answered `variant` (null: an error) at `at`. */
  count(flag: string, variant: string | null, at: number): void {
    if (this.closed) return;
    const minute = at - (at % MINUTE_MS);
    if (minute !== this.minute) this.turn(minute);
    let variants = this.current.get(flag);
    if (variants === undefined) {
      variants = new Map();
      this.current.set(flag, variants);
    }
    const key = variant ?? USAGE_ERROR_VARIANT;
    variants.set(key, (variants.get(key) ?? 0) + 1);
  }

  /** Sends what is counted now; resolves when the report is answered (or failed). */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
    const counts = this.take();
    if (counts.length === 0) return;
    this.sending = this.send(counts).finally(() => {
      this.sending = undefined;
    });
    await this.sending;
  }

  /** Reports what is left and stops. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.options.timers.clearTimeout(this.timer);
    await this.flush();
    this.closed = true;
  }

  private arm(): void {
    this.timer = this.options.timers.setTimeout(() => {
      if (this.closed) return;
      this.flush().finally(() => {
        if (!this.closed) this.arm();
      });
    }, this.options.intervalMs);
    // A report due must not keep a process alive that has nothing else to do.
    (this.timer as { unref?: () => void } | undefined)?.unref?.();
  }

  private turn(minute: number): void {
    if (this.current.size > 0) this.earlier.push({ minute: this.minute, counts: this.current });
    this.minute = minute;
    this.current = new Map();
  }

  /** Every count as the report carries it, emptying the reporter. */
  private take(): UsageCount[] {
    const all = [...this.earlier, { minute: this.minute, counts: this.current }];
    this.earlier = [];
    this.current = new Map();
    const counts: UsageCount[] = [];
    for (const { minute, counts: flags } of all) {
      if (!Number.isFinite(minute)) continue;
      const at = new Date(minute).toISOString();
      for (const [flag, variants] of flags)
        for (const [variant, count] of variants) counts.push({ flag, variant, minute: at, count });
    }
    return counts;
  }

  /** Puts back a report that failed on the way, keeping at most USAGE_REPORT_MAX_ENTRIES entries. */
  private keep(counts: readonly UsageCount[]): void {
    const byMinute = new Map<number, MinuteCounts>();
    for (const { flag, variant, minute, count } of counts) {
      const at = Date.parse(minute);
      let flags = byMinute.get(at);
      if (!flags) {
        flags = new Map();
        byMinute.set(at, flags);
      }
      const variants = flags.get(flag) ?? new Map<string, number>();
      variants.set(variant, (variants.get(variant) ?? 0) + count);
      flags.set(flag, variants);
    }
    const back = [...byMinute].map(([minute, flags]) => ({ minute, counts: flags }));
    // Counted meanwhile: added after what comes back (a minute may be in both: it is reported twice, added up by the server).
    this.earlier = [...back, ...this.earlier].sort((a, b) => a.minute - b.minute);
    let entries = this.size();
    while (entries > USAGE_REPORT_MAX_ENTRIES && this.earlier.length > 0) {
      const dropped = this.earlier.shift() as { counts: MinuteCounts };
      for (const variants of dropped.counts.values()) entries -= variants.size;
    }
  }

  private size(): number {
    let entries = 0;
    for (const { counts } of [...this.earlier, { counts: this.current }])
      for (const variants of counts.values()) entries += variants.size;
    return entries;
  }

  private async send(counts: UsageCount[]): Promise<void> {
    for (let i = 0; i < counts.length; i += USAGE_REPORT_MAX_ENTRIES) {
      const part = counts.slice(i, i + USAGE_REPORT_MAX_ENTRIES);
      try {
        const response = await this.options.fetch(this.options.url, {
          method: "POST",
          headers: { ...this.options.headers(), "content-type": "application/json" },
          body: JSON.stringify({ counts: part }),
          signal: AbortSignal.timeout(10_000),
        });
        // The body is not needed; reading it frees the connection.
        await response.text().catch(() => "");
        if (response.ok) continue;
        const error = new Error(`The usage report was answered ${response.status}.`);
        if (response.status >= 500 || response.status === 429 || response.status === 408) {
          this.keep(counts.slice(i));
          this.options.onError(error);
          return;
        }
        this.options.onError(error);
      } catch (error) {
        this.keep(counts.slice(i));
        this.options.onError(error instanceof Error ? error : new Error(String(error)));
        return;
      }
    }
  }
}
