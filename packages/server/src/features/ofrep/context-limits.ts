import type { preValidationHookHandler } from "fastify";
import { AppError } from "../../kernel/errors.js";

/**
 * How many values an OFREP evaluation body may hold: every object member and array item at any depth,
 * `context` and its attributes included. A real context has a targeting key, up to 100 actor ids and a
 * few dozen attributes; an evaluation only reads `targetingKey` and `actorIds`, and the bulk answer's
 * ETag hashes the whole context, so a larger one is only cost.
 */
export const MAX_CONTEXT_VALUES = 1000;
/** How deep values may nest, counted from the context's attributes (level 1). */
export const MAX_CONTEXT_DEPTH = 8;

const count = (n: number) => n.toLocaleString("en-US");

/**
 * What is wrong with a body's size or nesting, or undefined. Walks with an explicit stack, never
 * recursion, and stops at the first value past a limit, so its work is bounded by the limits, not by
 * the body.
 */
export function contextLimitFault(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  // The body's own members (`context`) are at level 0, the context's attributes at level 1.
  const stack: [value: object, depth: number][] = [[body, -1]];
  let values = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [object, number];
    const items: unknown[] = Array.isArray(value) ? value : Object.values(value);
    if (items.length === 0) continue;
    if (depth + 1 > MAX_CONTEXT_DEPTH) {
      return `The evaluation context nests deeper than ${MAX_CONTEXT_DEPTH} levels; OFREP contexts are limited to ${MAX_CONTEXT_DEPTH}.`;
    }
    values += items.length;
    if (values > MAX_CONTEXT_VALUES) {
      return `The evaluation context holds more than ${count(MAX_CONTEXT_VALUES)} values (attributes and array items at any depth); OFREP contexts are limited to ${count(MAX_CONTEXT_VALUES)}.`;
    }
    for (const item of items) if (typeof item === "object" && item !== null) stack.push([item, depth + 1]);
  }
  return undefined;
}

/**
 * The OFREP evaluation routes' preValidation hook: a body beyond MAX_CONTEXT_VALUES or
 * MAX_CONTEXT_DEPTH is refused (400, INVALID_CONTEXT) before it is inspected, validated, hashed or
 * evaluated.
 */
export const refuseOversizedContext: preValidationHookHandler = (request, _reply, done) => {
  const fault = contextLimitFault(request.body);
  if (fault === undefined) return done();
  done(new AppError(400, "invalid_request", fault, [{ path: "/context", message: fault }]));
};
