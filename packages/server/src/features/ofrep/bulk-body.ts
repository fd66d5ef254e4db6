import { constantAnswer, type FlagState, type ProjectState, type Resolution, resolutionOf } from "@flagstaff/core";
import { ofrepResult } from "@flagstaff/core/schemas";
import type { Clock } from "../../kernel/clock.js";
import type { Attributes, Checker } from "../evaluation/checker.js";
import type { Metrics } from "../metrics/metrics.js";

/**
 * The JSON of an answer without its flag's key (`"value":…,"reason":…,"variant":…,"metadata":{}}`), by
 * answer. Core's resolutionOf answers one shared object per compiled answer, so this is made once per
 * answer and reused until the flag's configuration changes (which compiles new answers).
 */
const answerJson = new WeakMap<Resolution, string>();

/**
 * One flag's OFREP result as JSON: the bytes the schema's serializer wrote (the same properties in the
 * same order, ofrepResult's), with the answer's part reused.
 */
export function ofrepResultJson(key: string, resolution: Resolution): string {
  if (resolution.reason === "ERROR") return JSON.stringify(ofrepResult(key, resolution));
  let answer = answerJson.get(resolution);
  if (answer === undefined) {
    const { key: _key, ...rest } = ofrepResult("", resolution);
    answer = JSON.stringify(rest).slice(1);
    answerJson.set(resolution, answer);
  }
  return `{"key":${JSON.stringify(key)},${answer}`;
}

/**
 * An environment's bulk answer at one evaluation version, in name order: the flags that answer every
 * context alike (core's constantAnswer) as runs of ready bytes, between the flags a context decides.
 */
interface BulkPlan {
  readonly version: number;
  readonly pieces: readonly (Buffer | FlagState)[];
  /** The ids of the flags in the runs, and the variant each answers (null: an error), for usage. */
  readonly constantIds: readonly string[];
  readonly constantVariants: readonly (string | null)[];
  /** The environment the plan is of. */
  readonly environment: string;
  /** When the runs' flags were last counted (NOTE_EVERY_MS), and the answers sent since. */
  notedAt: number;
  uncounted: number;
  /** How many of the runs' answers are on, and off (the checks counter). */
  readonly enabled: number;
  readonly disabled: number;
}

/**
 * How often the flags whose answers a bulk evaluation reuses are counted (usage) and noted as checked: at
 * most once a second per plan, adding up the answers sent since, as `latestCheckedAt` is kept to the
 * second anyway (CHECK_FLUSH_INTERVAL_MS writes it at most once a second), where counting 10,000 flags
 * for every request cost as much as the rest of the answer. The usage flush counts what is left first.
 */
const NOTE_EVERY_MS = 1000;

const OPEN = Buffer.from('{"flags":[');
const COMMA = Buffer.from(",");

/**
 * OFREP bulk answers' bodies, written here rather than by Fastify's serializer: a project of 10,000 flags
 * answers about 840 KiB to each client after every change, and most flags answer every client alike
 * (no targeting, or off). Those answers are encoded once per environment and evaluation version, and a
 * request evaluates only the flags its context decides and sends the shared bytes as they are: at 10,000
 * flags a bulk answer costs the server about 0.7 ms, where evaluating and encoding every flag for every
 * client cost 13 ms.
 */
export class BulkAnswers {
  private readonly plans = new WeakMap<ProjectState, BulkPlan>();
  /** Plans with answers sent and not yet counted. */
  private readonly uncounted = new Set<BulkPlan>();

  constructor(
    private readonly checker: Checker,
    private readonly metrics: Metrics,
    private readonly clock: Clock,
  ) {
    checker.beforeUsageFlush(() => this.countSent(this.clock.now()));
  }

  /** Counts the shared answers sent since each plan's last count. */
  private countSent(now: number): void {
    for (const plan of this.uncounted) this.countPlan(plan, now);
  }

  private countPlan(plan: BulkPlan, now: number): void {
    this.checker.countReused(plan.environment, plan.constantIds, plan.constantVariants, plan.uncounted, now);
    plan.uncounted = 0;
    plan.notedAt = now;
    this.uncounted.delete(plan);
  }

  /**
   * A constant flag's result JSON, kept with the flag until its answer changes: a change of one flag
   * rebuilds the plan of its environment, and every other flag's JSON is then taken as it was.
   */
  private readonly constants = new WeakMap<FlagState, { resolution: Resolution; json: string }>();

  private constantJson(flag: FlagState, resolution: Resolution): string {
    const kept = this.constants.get(flag);
    if (kept !== undefined && kept.resolution === resolution) return kept.json;
    const json = ofrepResultJson(flag.name, resolution);
    this.constants.set(flag, { resolution, json });
    return json;
  }

  private planOf(state: ProjectState, environment: string): BulkPlan {
    const cached = this.plans.get(state);
    if (cached !== undefined && cached.version === state.evaluationVersion) return cached;
    const pieces: (Buffer | FlagState)[] = [];
    const constantIds: string[] = [];
    const constantVariants: (string | null)[] = [];
    let run: string[] = [];
    let enabled = 0;
    let disabled = 0;
    const endRun = () => {
      if (run.length > 0) pieces.push(Buffer.from(run.join(",")));
      run = [];
    };
    for (const name of state.flagNamesInOrder()) {
      const flag = state.flagsByName.get(name);
      if (flag === undefined) continue;
      const answer = constantAnswer(flag);
      if (answer === undefined) {
        endRun();
        pieces.push(flag);
        continue;
      }
      const resolution = resolutionOf(flag, answer);
      run.push(this.constantJson(flag, resolution));
      constantIds.push(flag.id);
      constantVariants.push(resolution.variant);
      if (resolution.reason === "ERROR") continue;
      if (resolution.enabled) enabled++;
      else disabled++;
    }
    endRun();
    const plan = {
      version: state.evaluationVersion,
      pieces,
      constantIds,
      constantVariants,
      environment,
      enabled,
      disabled,
      notedAt: Number.NEGATIVE_INFINITY,
      uncounted: 0,
    };
    this.plans.set(state, plan);
    return plan;
  }

  /**
   * The bulk answer of every flag of the environment's state for a context: the bytes of OfrepBulk in
   * parts, most of them shared with every other answer at this version (sent as they are, never copied
   * into one buffer per client), and their length. `rest`: the properties after `flags` (eventStreams).
   */
  body(
    state: ProjectState,
    environment: string,
    actorIds: readonly string[],
    attributes: Attributes | undefined,
    rest?: Record<string, unknown>,
  ): { parts: Buffer[]; length: number } {
    const plan = this.planOf(state, environment);
    const now = this.clock.now();
    plan.uncounted++;
    if (now - plan.notedAt >= NOTE_EVERY_MS) this.countPlan(plan, now);
    else this.uncounted.add(plan);
    let enabled = plan.enabled;
    let disabled = plan.disabled;
    const parts: Buffer[] = [OPEN];
    for (const piece of plan.pieces) {
      if (parts.length > 1) parts.push(COMMA);
      if (Buffer.isBuffer(piece)) {
        parts.push(piece);
        continue;
      }
      const resolution = this.checker.resolve(state, environment, piece, actorIds, attributes);
      if (resolution.reason !== "ERROR") {
        if (resolution.enabled) enabled++;
        else disabled++;
      }
      parts.push(Buffer.from(ofrepResultJson(piece.name, resolution)));
    }
    this.metrics.recordChecks(enabled, disabled);
    const after = rest === undefined ? "" : `,${JSON.stringify(rest).slice(1, -1)}`;
    parts.push(Buffer.from(`]${after}}`));
    let length = 0;
    for (const part of parts) length += part.length;
    return { parts, length };
  }
}
