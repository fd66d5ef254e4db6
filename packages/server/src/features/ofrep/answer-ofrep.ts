import type { Evaluation } from "@flagstaff/core";
import type { Checker } from "../evaluation/checker.js";
import type { Metrics } from "../metrics/metrics.js";

/** A successful evaluation, as OFREP answers it (the single evaluation, and each flag of the bulk one). */
export const success = (key: string, evaluation: Evaluation) => ({
  key,
  value: evaluation.enabled,
  reason: evaluation.reason,
  variant: evaluation.enabled ? ("on" as const) : ("off" as const),
  metadata: {},
});

/**
 * Answers OFREP's single evaluation whose request has been read and authorised: evaluates the flag for
 * the actors, counts the result and gives the JSON body. Throws the 404 of an unknown flag. The Fastify
 * route and the node:http adapter (http/node-adapter.ts) both call it.
 */
export type AnswerOfrep = (
  projectId: string,
  /** The key's environment; null: the project's default. */
  environment: string | null,
  key: string,
  actors: readonly string[],
) => string;

export function ofrepAnswers(checker: Checker, metrics: Metrics): AnswerOfrep {
  return (projectId, environment, key, actors) => {
    const evaluation = checker.check(projectId, environment, key, actors);
    metrics.recordCheck(evaluation.enabled);
    return JSON.stringify(success(key, evaluation));
  };
}
