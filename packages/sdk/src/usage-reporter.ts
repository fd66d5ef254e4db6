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

/** A report's id: 16 random bytes as hex (getRandomValues works where randomUUID does not: plain http pages). */
function reportId(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A report made and not yet answered: sent again as it is, under its id, so the server counts it once. */
interface Outgoing {
  readonly id: string;
  readonly counts: readonly UsageCount[];
}

/**
 * Counts a local evaluator's evaluations per flag, variant and minute, in memory, and reports them
 * (`POST /projects/{projectId}/usage`, docs/usage.md) every `intervalMs` and when closed. Counting is two
 * map lookups and an increment: an evaluation never waits for a report. Each report has an id; one that
 * fails on the way (the network, a timeout, a 5xx, a 429) is kept as it is and sent again first, under
 * the same id, so the server counts it once even when only its answer was lost. One the server refuses
 * for good (any other 4xx: a revoked key) is dropped, as sending it again could not help. At most
 * USAGE_REPORT_MAX_ENTRIES entries wait: past that, the oldest reports go first.
 */
export class UsageReporter {
  /** The minute `current` counts. */
  private minute = Number.NaN;
  private current: MinuteCounts = new Map();
  /** Earlier minutes not reported yet, oldest first. */
  private earlier: { minute: number; counts: MinuteCounts }[] = [];
  /** Reports made and not answered yet, oldest first. */
  private outbox: Outgoing[] = [];
  private timer: unknown;
  private sending: Promise<void> | undefined;
  private closed = false;
  /** No more reports (the evaluator stopped: its key was refused, its project is gone). */
  private halted = false;

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

  /** Sends what is counted now, after any report still waiting; resolves when they are answered (or failed). */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
    const counts = this.take();
    for (let i = 0; i < counts.length; i += USAGE_REPORT_MAX_ENTRIES)
      this.outbox.push({ id: reportId(), counts: counts.slice(i, i + USAGE_REPORT_MAX_ENTRIES) });
    this.bound();
    if (this.outbox.length === 0) return;
    this.sending = this.sendAll().finally(() => {
      this.sending = undefined;
    });
    await this.sending;
  }

  /** Sends no more reports (the evaluator stopped for good: any report would be refused too). */
  halt(): void {
    this.halted = true;
    this.options.timers.clearTimeout(this.timer);
  }

  /** Reports what is left (unless halted) and stops. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.options.timers.clearTimeout(this.timer);
    if (!this.halted) await this.flush();
    this.closed = true;
  }

  private arm(): void {
    if (this.halted) return;
    this.timer = this.options.timers.setTimeout(() => {
      if (this.closed || this.halted) return;
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

  /** Keeps at most USAGE_REPORT_MAX_ENTRIES entries waiting, dropping the oldest reports. */
  private bound(): void {
    let entries = this.outbox.reduce((n, report) => n + report.counts.length, 0);
    while (entries > USAGE_REPORT_MAX_ENTRIES && this.outbox.length > 1) {
      entries -= (this.outbox.shift() as Outgoing).counts.length;
    }
  }

  /** Sends the waiting reports in order; stops at the first that fails on the way (it waits for the next flush). */
  private async sendAll(): Promise<void> {
    while (this.outbox.length > 0) {
      const report = this.outbox[0] as Outgoing;
      const outcome = await this.send(report);
      if (outcome === "retry") return;
      this.outbox.shift();
    }
  }

  private async send(report: Outgoing): Promise<"done" | "retry"> {
    try {
      const response = await this.options.fetch(this.options.url, {
        method: "POST",
        headers: { ...this.options.headers(), "content-type": "application/json" },
        body: JSON.stringify({ id: report.id, counts: report.counts }),
        signal: AbortSignal.timeout(10_000),
      });
      // The body is not needed; reading it frees the connection.
      await response.text().catch(() => "");
      if (response.ok) return "done";
      this.options.onError(new Error(`The usage report was answered ${response.status}.`));
      return response.status >= 500 || response.status === 429 || response.status === 408 ? "retry" : "done";
    } catch (error) {
      this.options.onError(error instanceof Error ? error : new Error(String(error)));
      return "retry";
    }
  }
}
