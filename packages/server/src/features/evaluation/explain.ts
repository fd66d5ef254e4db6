import { evaluateFlag, resolutionOf } from "@flagstaff/core";
import type { FlagExplanation } from "@flagstaff/core/schemas";
import type { EnvironmentScope } from "../../access/environment-scope.js";
import type { Clock } from "../../kernel/clock.js";
import { flagNotFound } from "../../kernel/errors.js";
import type { Attributes } from "./checker.js";
import type { Snapshot } from "./snapshot.js";

/** The names of a project's segments by id (those that exist): segments' repository, handed in by the flags module. */
export type SegmentNames = (projectId: string, ids: readonly string[]) => Promise<Map<string, string>>;

/** Explains a flag's answer from the snapshot the check answers from. */
export class FlagExplainer {
  constructor(
    private readonly segmentNames: SegmentNames,
    private readonly snapshot: Snapshot,
    private readonly clock: Clock,
  ) {}

  /**
   * Why the flag answers as it does for this context, from the same snapshot and engine the check uses
   * (a read: it records no check, and draws nothing for the flag's call rollout): core's evaluateFlag
   * with the decision in detail, which names the rule and its conditions, the prerequisite, the actor or
   * the segment that decided; segments are named from the database.
   */
  async explain(
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    actorIds: readonly string[],
    attributes?: Attributes,
  ): Promise<FlagExplanation> {
    const { state } = this.snapshot.environmentState(projectId, scope.environment);
    const flag = state.flagsByName.get(name);
    if (!flag) throw flagNotFound(name);
    const resolver = {
      isMember: state.isMember,
      segmentConditions: (id: string) => state.segmentConditions(id),
      flag: (other: string) => state.flag(other),
      now: () => this.clock.now(),
    };
    const decision = evaluateFlag(flag, { actorIds, attributes }, resolver, { detail: true });
    const rule = decision.ruleIndex === null ? undefined : flag.rules[decision.ruleIndex];
    const segmentId = decision.segmentId;
    const ids = new Set([...decision.actors.flatMap((a) => a.segments), ...(segmentId === null ? [] : [segmentId])]);
    const names = await this.segmentNames(projectId, [...ids]);
    const named = (id: string) => ({ id, name: names.get(id) ?? id });
    return {
      enabled: resolutionOf(flag, decision).enabled,
      reason: decision.reason,
      rule: decision.rule,
      variant: decision.variant,
      value: decision.value,
      matchedRule:
        rule === undefined
          ? null
          : {
              index: decision.ruleIndex as number,
              id: rule.id,
              ...(rule.description === undefined ? {} : { description: rule.description }),
              conditions: [...rule.conditions],
            },
      prerequisite: decision.prerequisite ?? null,
      actorId: decision.actorId,
      segmentId,
      segment: segmentId === null ? null : named(segmentId),
      threshold: decision.threshold,
      callRolloutPercentage: decision.callRolloutPercentage,
      actors: decision.actors.map((a) => ({ ...a, segments: a.segments.map(named) })),
    };
  }
}
