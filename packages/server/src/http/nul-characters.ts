import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError, type FieldError } from "../errors.js";

/** Collects the JSON Pointer of every string under `value` that contains U+0000. */
function findNul(value: unknown, path: string, out: FieldError[]): void {
  if (typeof value === "string") {
    if (value.includes("\u0000")) out.push({ path: path || "/", message: "must not contain NUL (U+0000) characters" });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) findNul(value[i], `${path}/${i}`, out);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) findNul(item, `${path}/${key}`, out);
  }
}

/**
 * Refuses any request that carries U+0000 in a path parameter, query value or body string. PostgreSQL
 * cannot store the character at all and SQLite's text functions stop at it, so no stored name, id or
 * description can ever contain one: the request is invalid (400) on both engines alike.
 */
export function rejectNulCharacters(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: (error?: Error) => void,
): void {
  const errors: FieldError[] = [];
  findNul(request.params, "/params", errors);
  findNul(request.query, "/query", errors);
  if (request.body !== undefined) findNul(request.body, "", errors);
  if (errors.length === 0) {
    done();
    return;
  }
  done(new AppError(400, "invalid_request", "NUL (U+0000) characters are not allowed anywhere in a request.", errors));
}
