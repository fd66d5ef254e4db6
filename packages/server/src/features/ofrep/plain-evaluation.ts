import type { IncomingHttpHeaders } from "node:http";
import { MAX_ACTORS } from "@flagstaff/core";
import { isPlainActorId } from "../evaluation/plain-check.js";

const EVALUATE_PATH = /^\/ofrep\/v1\/evaluate\/flags\/([A-Za-z0-9._:-]{1,128})$/;
const PLAIN_LENGTH = /^[1-9][0-9]{0,3}$/;
/** Bodies the adapter reads itself are small: a context with a targeting key and a few actor ids. */
const MAX_PLAIN_BODY = 4096;

/**
 * The flag of an OFREP single evaluation the node:http adapter may read itself, judged on its URL and
 * headers alone: the path plainly spelled with no query, `Content-Type: application/json` and a
 * `Content-Length` of at most 4 KiB (well under OFREP_BODY_LIMIT_BYTES, whose 413 stays the route's).
 * Otherwise undefined, and Fastify takes the request from the start.
 */
export function plainEvaluationKey(url: string, headers: IncomingHttpHeaders): string | undefined {
  const match = EVALUATE_PATH.exec(url);
  if (match === null) return undefined;
  if (headers["content-type"] !== "application/json" || headers["transfer-encoding"] !== undefined) return undefined;
  const length = headers["content-length"];
  if (length === undefined || !PLAIN_LENGTH.test(length) || Number(length) > MAX_PLAIN_BODY) return undefined;
  return match[1];
}

/**
 * The actors of a plainly written body (`{}` or `{"context":{"targetingKey":…,"actorIds":[…]}}`), or
 * undefined for any other body, which the route reads (and refuses, or reads the same actors from).
 * Such a body is well within the context limits (context-limits.ts), which the route applies.
 */
export function plainActors(text: string): string[] | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const actors: string[] = [];
  for (const name in body) {
    if (name !== "context") return undefined;
    const context = (body as { context: unknown }).context;
    if (typeof context !== "object" || context === null || Array.isArray(context)) return undefined;
    for (const field in context) {
      const value = (context as Record<string, unknown>)[field];
      if (field === "targetingKey" && isPlainActorId(value)) actors.unshift(value);
      else if (field === "actorIds" && Array.isArray(value) && value.length <= MAX_ACTORS) {
        for (const id of value) {
          if (!isPlainActorId(id)) return undefined;
          actors.push(id);
        }
      } else return undefined;
    }
  }
  return actors;
}
