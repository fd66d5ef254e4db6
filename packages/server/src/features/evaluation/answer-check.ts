import type { Resolution } from "@flagstaff/core";
import type { Attributes, Checker } from "./checker.js";

/** The check's answer: its JSON body, already written out, and its Cache-Control. */
export interface CheckAnswer {
  readonly enabled: boolean;
  readonly body: string;
  readonly cacheControl: string;
}

/**
 * Answers a check whose request has been read and authorised: evaluates, counts the result and gives
 * the answer. Throws the 404 of an unknown project or flag. The Fastify route and the node:http adapter
 * (http/node-adapter.ts) both call it, so the check's answer has one home whichever door it came in by.
 */
export type AnswerCheck = (
  projectId: string,
  /** The key's environment, or the one the request names; null: the project's default. */
  environment: string | null,
  flagName: string,
  actorIds: readonly string[] | undefined,
  cache: number | undefined,
  /** The context's attributes (`attributes[NAME]=value`), for rules. */
  attributes?: Attributes,
) => CheckAnswer;

/** The check's Cache-Control: `no-store` unless the caller asked for `cache` seconds. */
export function cacheControl(cache: number | undefined): string {
  return cache === undefined ? "no-store" : `private, max-age=${Math.floor(cache)}`;
}

const answerOf = (enabled: boolean, cache: number | undefined): CheckAnswer => ({
  enabled,
  body: JSON.stringify({ enabled }),
  cacheControl: cacheControl(cache),
});
// Most checks ask for no cache: their two answers are made once.
const ENABLED = answerOf(true, undefined);
const DISABLED = answerOf(false, undefined);

/**
 * A typed flag's answer: `enabled` (it serves anything but its offVariant), the variant and its value.
 * A boolean flag answers `{"enabled": …}` alone, as the seed's check always has.
 */
const typedAnswer = (resolution: Resolution, cache: number | undefined): CheckAnswer => ({
  enabled: resolution.enabled,
  body: JSON.stringify({ enabled: resolution.enabled, variant: resolution.variant, value: resolution.value }),
  cacheControl: cacheControl(cache),
});

/** What the check counts its answers with: metrics/metrics.ts's `Metrics` (a layer above the checker). */
export interface CheckCounter {
  recordCheck(enabled: boolean): void;
}

export function checkAnswers(checker: Checker, metrics: CheckCounter): AnswerCheck {
  return (projectId, environment, flagName, actorIds, cache, attributes) => {
    const { resolution, typed } = checker.check(projectId, environment, flagName, actorIds, attributes);
    const enabled = resolution.enabled;
    metrics.recordCheck(enabled);
    if (typed) return typedAnswer(resolution, cache);
    if (cache === undefined) return enabled ? ENABLED : DISABLED;
    return answerOf(enabled, cache);
  };
}
