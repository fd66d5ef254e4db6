import { ofrepResult } from "@flagstaff/core/schemas";
import { AppError } from "../../kernel/errors.js";
import type { Attributes, Checker } from "../evaluation/checker.js";
import type { Metrics } from "../metrics/metrics.js";

/** A flag that could not be evaluated (reason ERROR): OFREP's 400 with the engine's error code. */
export class OfrepEvaluationError extends AppError {
  constructor(
    readonly errorCode: string,
    detail: string,
  ) {
    super(400, "invalid_request", detail);
  }
}

/** What an OFREP evaluation reads of its context: the actors, and the attributes rules read. */
export interface OfrepTarget {
  readonly actors: readonly string[];
  readonly attributes: Attributes | undefined;
}

/**
 * Answers OFREP's single evaluation whose request has been read and authorised: evaluates the flag for
 * the context, counts the result and gives the JSON body. Throws the 404 of an unknown flag, and an
 * OfrepEvaluationError for a flag that cannot be evaluated. The Fastify route and the node:http adapter
 * (http/node-adapter.ts) both call it.
 */
export type AnswerOfrep = (
  projectId: string,
  /** The key's environment; null: the project's default. */
  environment: string | null,
  key: string,
  actors: readonly string[],
  attributes?: Attributes,
) => string;

export function ofrepAnswers(checker: Checker, metrics: Metrics): AnswerOfrep {
  return (projectId, environment, key, actors, attributes) => {
    const { resolution } = checker.check(projectId, environment, key, actors, attributes);
    if (resolution.reason === "ERROR") throw new OfrepEvaluationError(resolution.errorCode, resolution.errorMessage);
    metrics.recordCheck(resolution.enabled);
    return JSON.stringify(ofrepResult(key, resolution));
  };
}
