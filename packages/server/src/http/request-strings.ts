import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, type FieldError } from "../kernel/errors.js";

/**
 * How deep a request's values may nest. The API's own bodies nest three levels at most and OFREP
 * contexts a few more; the bound keeps every later step (validation, hashing, logging) off deep stacks.
 */
export const MAX_NESTING = 32;
/** A request with more faults than this is refused with the first ones listed, not all of them. */
const MAX_REPORTED = 10;

const NUL_MESSAGE = "must not contain NUL (U+0000) characters";
const SURROGATE_MESSAGE = "must be well-formed Unicode (no lone UTF-16 surrogate)";

/**
 * Collects the JSON Pointer of every string (object keys included) under `root` that is not
 * well-formed UTF-16 or, with `refuseNul`, contains U+0000. Walks with an explicit stack, never
 * recursion, so no input can overflow the call stack; answers "too deep" past MAX_NESTING levels.
 */
function inspect(root: unknown, base: string, refuseNul: boolean, out: FieldError[]): "too deep" | undefined {
  const stack: [value: unknown, path: string, depth: number][] = [[root, base, 0]];
  const checkString = (text: string, path: string) => {
    if (!text.isWellFormed()) out.push({ path: path || "/", message: SURROGATE_MESSAGE });
    else if (refuseNul && text.includes("\u0000")) out.push({ path: path || "/", message: NUL_MESSAGE });
  };
  while (stack.length > 0 && out.length < MAX_REPORTED) {
    const [value, path, depth] = stack.pop() as [unknown, string, number];
    if (typeof value === "string") {
      checkString(value, path);
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_NESTING) return "too deep";
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}/${i}`, depth + 1]);
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      checkString(key, `${path}/${key}`);
      stack.push([item, `${path}/${key}`, depth + 1]);
    }
  }
  return undefined;
}

/**
 * A route hook refusing (400) any request whose path, query or body holds a string that is not
 * well-formed Unicode, or values nested deeper than MAX_NESTING; with `refuseNul`, also U+0000.
 * Lone surrogates cannot be stored as UTF-8 (PostgreSQL refuses them) nor round-trip through any client;
 * NUL cannot be stored by PostgreSQL at all and SQLite's text functions stop at it. So such a request is
 * invalid on both engines alike, and is refused before anything is validated, stored or hashed.
 */
export function inspectRequestStrings(options: { refuseNul: boolean }) {
  const { refuseNul } = options;
  return function rejectIllFormedStrings(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: (error?: Error) => void,
  ): void {
    const errors: FieldError[] = [];
    inspect(request.params, "/params", refuseNul, errors);
    inspect(request.query, "/query", refuseNul, errors);
    if (request.body !== undefined && inspect(request.body, "", refuseNul, errors) === "too deep") {
      done(
        new AppError(400, "invalid_request", `The request body nests deeper than ${MAX_NESTING} levels.`, [
          { path: "/", message: `must not nest deeper than ${MAX_NESTING} levels` },
        ]),
      );
      return;
    }
    if (errors.length === 0) {
      done();
      return;
    }
    const nul = errors.some((e) => e.message === NUL_MESSAGE);
    const surrogate = errors.some((e) => e.message === SURROGATE_MESSAGE);
    const detail =
      nul && !surrogate
        ? "NUL (U+0000) characters are not allowed anywhere in a request."
        : "Every string in a request must be well-formed Unicode: a lone UTF-16 surrogate (such as U+D800 without its pair) cannot be stored.";
    done(new AppError(400, "invalid_request", detail, errors));
  };
}
