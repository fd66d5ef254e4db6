import { constantAnswer, type FlagState, type ProjectState, type Resolution, resolutionOf } from "@flagstaff/core";
import { ofrepResult } from "@flagstaff/core/schemas";
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
  /** The ids of the flags in the runs, for `latestCheckedAt`. */
  readonly constantIds: readonly string[];
  /** How many of the runs' answers are on, and off (the checks counter). */
  readonly enabled: number;
  readonly disabled: number;
}

const OPEN = Buffer.from('{"flags":[');
const COMMA = Buffer.from(",");

/**
 * OFREP bulk answers' bodies, written here rather than by Fastify's serializer: a project of 10,000 flags
 * answers about 840 KiB to each client after every change, and most flags answer every client alike
 * (no targeting, or off). Those answers are encoded once per environment and evaluation version, and a
 * request evaluates only the flags its context decides; a burst of refetches after a change then costs
 * little more than copying bytes, where evaluating and encoding every flag for every client held the event
 * loop for tens of milliseconds each.
 */
export class BulkAnswers {
  private readonly plans = new WeakMap<ProjectState, BulkPlan>();

  constructor(
    private readonly checker: Checker,
    private readonly metrics: Metrics,
  ) {}

  private planOf(state: ProjectState): BulkPlan {
    const cached = this.plans.get(state);
    if (cached !== undefined && cached.version === state.evaluationVersion) return cached;
    const pieces: (Buffer | FlagState)[] = [];
    const constantIds: string[] = [];
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
      run.push(ofrepResultJson(name, resolution));
      constantIds.push(flag.id);
      if (resolution.reason === "ERROR") continue;
      if (resolution.enabled) enabled++;
      else disabled++;
    }
    endRun();
    const plan = { version: state.evaluationVersion, pieces, constantIds, enabled, disabled };
    this.plans.set(state, plan);
    return plan;
  }

  /**
   * The bulk answer of every flag of the environment's state for a context, as the bytes of OfrepBulk;
   * `rest`: the properties after `flags` (eventStreams).
   */
  body(
    state: ProjectState,
    environment: string,
    actorIds: readonly string[],
    attributes: Attributes | undefined,
    rest?: Record<string, unknown>,
  ): Buffer {
    const plan = this.planOf(state);
    this.checker.noteChecked(environment, plan.constantIds);
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
    return Buffer.concat(parts);
  }
}
