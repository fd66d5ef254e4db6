import type { Kysely } from "kysely";
import { USAGE_SERIES_MAX_POINTS, type UsageStep } from "@flagstaff/core";
import type { ProjectUsage, UsageReport, UsageReportResult, UsageSeries } from "@flagstaff/core/schemas";
import type { EnvironmentScope } from "../../access/environment-scope.js";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { environmentNotFound, flagNotFound, invalid, projectNotFound } from "../../kernel/errors.js";
import type { Snapshot } from "../evaluation/snapshot.js";
import type { CheckRecorder } from "../evaluation/check-recorder.js";
import type { FlagStore } from "../flags/flag.store.js";
import { ceilTo, DAY_MS, floorTo, HOUR_MS, MINUTE_MS, STEP_MS } from "./usage-buckets.js";
import { type MinuteCount, sourcesOf, type UsageRepository } from "./usage.repository.js";

/** A report's minutes may be this far ahead of the server's clock (the SDK's clock may run ahead). */
const AHEAD_MS = 5 * MINUTE_MS;

/** The default range of a series, by step: what the console's range picker starts with. */
const DEFAULT_SPAN: Record<UsageStep, number> = { minute: HOUR_MS, hour: DAY_MS, day: 30 * DAY_MS };

export interface UsageQuery {
  readonly step?: UsageStep;
  readonly from?: string;
  readonly to?: string;
}

interface Range {
  readonly step: UsageStep;
  readonly stepMs: number;
  readonly from: number;
  readonly to: number;
  readonly points: number;
}

/** Usage as the API answers and takes it (docs/usage.md). */
export class UsageService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly repository: UsageRepository,
    private readonly snapshot: Snapshot,
    private readonly recorder: CheckRecorder,
    private readonly store: FlagStore,
    private readonly clock: Clock,
    private readonly minuteRetentionMs: number,
  ) {}

  /**
   * Records an SDK's counts in the environment it evaluates (its key's, or the one named, or the
   * default), in one transaction, and notes the flags as checked. Counts of flags the environment does
   * not have now, or of minutes not kept or too far ahead, are dropped and counted as such.
   */
  async report(projectId: string, environment: string | null, report: UsageReport): Promise<UsageReportResult> {
    const project = this.snapshot.projects.get(projectId);
    if (!project) throw projectNotFound(projectId);
    const id = project.resolve(environment);
    const state = project.environments.get(id);
    if (!state) throw environmentNotFound(id);
    const now = this.clock.now();
    const counts: MinuteCount[] = [];
    const latest = new Map<string, number>();
    for (const entry of report.counts) {
      const flag = state.flagsByName.get(entry.flag);
      const minute = floorTo(Date.parse(entry.minute), MINUTE_MS);
      if (!flag || minute < now - this.minuteRetentionMs || minute > now + AHEAD_MS) continue;
      counts.push({
        configId: `${flag.id}@${id}`,
        flagId: flag.id,
        variant: entry.variant,
        minute,
        count: entry.count,
      });
      // Evaluated within that minute, and not after now: its last instant, at most.
      const at = Math.min(now, minute + MINUTE_MS - 1);
      if ((latest.get(flag.id) ?? Number.NEGATIVE_INFINITY) < at) latest.set(flag.id, at);
    }
    const recorded = await this.repository.addMinutes(
      counts,
      report.id === undefined ? undefined : { id: `${projectId}/${report.id}`, at: now },
    );
    if (recorded === "duplicate") return { accepted: 0, dropped: 0, duplicate: true };
    for (const [flagId, at] of latest) this.recorder.note(id, flagId, at);
    return { accepted: recorded, dropped: report.counts.length - recorded, duplicate: false };
  }

  /** The range a query asks for, rounded out to its step; refused when it is empty, reversed or too long. */
  private rangeOf(query: UsageQuery): Range {
    const step = query.step ?? "hour";
    const stepMs = STEP_MS[step];
    // By default up to the end of the bucket under way, so that the last point is now's.
    const toAt = query.to === undefined ? floorTo(this.clock.now(), stepMs) + stepMs : Date.parse(query.to);
    const fromAt = query.from === undefined ? toAt - DEFAULT_SPAN[step] : Date.parse(query.from);
    if (!(fromAt < toAt)) {
      throw invalid("`from` must be before `to`.", [{ path: "/query/from", message: "must be before to" }]);
    }
    const from = floorTo(fromAt, stepMs);
    const to = ceilTo(toAt, stepMs);
    const points = (to - from) / stepMs;
    if (points > USAGE_SERIES_MAX_POINTS) {
      throw invalid(
        `A series holds at most ${USAGE_SERIES_MAX_POINTS.toLocaleString("en")} buckets; from ${isoTime(from)} to ${isoTime(to)} by ${step} is ${points.toLocaleString("en")}: take a longer step or a shorter range.`,
        [{ path: "/query/from", message: `at most ${USAGE_SERIES_MAX_POINTS} ${step}s before to` }],
      );
    }
    return { step, stepMs, from, to, points };
  }

  /** A flag's evaluations per bucket and variant in an environment (an archived flag's too). */
  async series(projectId: string, scope: EnvironmentScope, name: string, query: UsageQuery): Promise<UsageSeries> {
    const environment = await this.store.resolveEnvironment(this.db, projectId, scope.environment);
    const flag = await this.store.findFlag(this.db, projectId, environment, name);
    if (!flag) throw flagNotFound(name);
    const range = this.rangeOf(query);
    const marks = await this.repository.watermarks();
    const points = Array.from({ length: range.points }, (_, i) => ({
      at: isoTime(range.from + i * range.stepMs),
      evaluations: {} as Record<string, number>,
    }));
    const totals: Record<string, number> = {};
    for (const [granularity, start, end] of sourcesOf(range.step, range.from, range.to, marks)) {
      for (const row of await this.repository.rows(flag.configId, granularity, start, end)) {
        const point = points[Math.floor((row.bucket - range.from) / range.stepMs)];
        if (!point) continue;
        point.evaluations[row.variant] = (point.evaluations[row.variant] ?? 0) + row.count;
        totals[row.variant] = (totals[row.variant] ?? 0) + row.count;
      }
    }
    return {
      flag: name,
      environment,
      step: range.step,
      from: isoTime(range.from),
      to: isoTime(range.to),
      points,
      totals,
    };
  }

  /** Several flags' evaluations per bucket, every variant added up (the flag list's sparklines). */
  async ofFlags(
    projectId: string,
    scope: EnvironmentScope,
    names: readonly string[],
    query: UsageQuery,
  ): Promise<ProjectUsage> {
    const environment = await this.store.resolveEnvironment(this.db, projectId, scope.environment);
    const range = this.rangeOf(query);
    const flags = await this.store.findFlagsByNames(this.db, projectId, environment, [...new Set(names)]);
    const byConfig = new Map(flags.map((flag) => [flag.configId, flag.name]));
    const series: Record<string, number[]> = {};
    for (const flag of flags) series[flag.name] = new Array<number>(range.points).fill(0);
    const marks = await this.repository.watermarks();
    for (const [granularity, start, end] of sourcesOf(range.step, range.from, range.to, marks)) {
      for (const row of await this.repository.rowsOf([...byConfig.keys()], granularity, start, end)) {
        const values = series[byConfig.get(row.configId) as string] as number[];
        const index = Math.floor((row.bucket - range.from) / range.stepMs);
        if (index >= 0 && index < values.length) values[index] = (values[index] as number) + row.count;
      }
    }
    return { environment, step: range.step, from: isoTime(range.from), to: isoTime(range.to), flags: series };
  }
}
