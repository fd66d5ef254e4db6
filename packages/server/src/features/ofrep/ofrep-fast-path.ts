import type { IncomingMessage, ServerResponse } from "node:http";
import type { Credentials } from "../../http/auth.js";
import { MAX_ACTORS } from "@flagstaff/core";
import type { Checker } from "../evaluation/checker.js";
import { FastPath, type FastPathOptions, isPlainActorId } from "../evaluation/fast-path.js";
import type { Metrics } from "../metrics/metrics.js";
import { leaveBody } from "./buffered-body.js";
import { OFREP_EVALUATE_ROUTE, success } from "./ofrep.routes.js";

const EVALUATE_PATH = /^\/ofrep\/v1\/evaluate\/flags\/([A-Za-z0-9._:-]{1,128})$/;
const PLAIN_LENGTH = /^[1-9][0-9]{0,3}$/;
/** Bodies the fast path reads itself are small: a context with a targeting key and a few actor ids. */
const MAX_PLAIN_BODY = 4096;

/** The actors of a plainly written body (`{}` or `{"context":{"targetingKey":…,"actorIds":[…]}}`), or undefined. */
function plainActors(text: string): string[] | undefined {
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

/**
 * OFREP's single evaluation in front of Fastify, as CheckFastPath does for the check: it answers the
 * 200 of a plainly written request itself, with the same key rules, evaluation, body, headers and
 * metrics as the Fastify route. It decides on the headers first (path without encoding or query,
 * `Content-Type: application/json`, a `Content-Length` of at most 4 KiB, a key of a project that has the
 * flag, no Origin under CORS); then it reads the body. A body it does not read plainly (anything but a
 * context of a plain targeting key and actor ids) is handed to Fastify with the request, and the route's
 * preParsing hook gives it back, so Fastify answers exactly as if it had read it itself.
 */
export class OfrepFastPath extends FastPath {
  constructor(
    checker: Checker,
    metrics: Metrics,
    credentials: Credentials,
    options: FastPathOptions,
    /** Fastify's own handler, for a request whose body turned out not to be plain. */
    private readonly handOff: (request: IncomingMessage, response: ServerResponse) => void,
  ) {
    super(checker, metrics, credentials, options, "POST", OFREP_EVALUATE_ROUTE);
  }

  /** Takes the request (and answers it, now or once its body is in) and returns true, or returns false untouched. */
  serve(request: IncomingMessage, response: ServerResponse): boolean {
    if (!this.open || request.method !== "POST") return false;
    const match = EVALUATE_PATH.exec(request.url as string);
    if (match === null) return false;
    const started = performance.now();
    const headers = request.headers;
    if (headers["content-type"] !== "application/json" || headers["transfer-encoding"] !== undefined) return false;
    const length = headers["content-length"];
    if (length === undefined || !PLAIN_LENGTH.test(length) || Number(length) > MAX_PLAIN_BODY) return false;
    const principal = this.principalAllowed(headers, "evaluate", undefined);
    if (principal === undefined) return false;
    const projectId = principal.projectId as string;
    const flagName = match[1] as string;
    if (!this.checker.has(projectId, flagName)) return false;
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const actors = this.open ? plainActors(body.toString("utf8")) : undefined;
      let answer: string | undefined;
      if (actors !== undefined) {
        try {
          const evaluation = this.checker.check(projectId, flagName, actors);
          this.metrics.recordCheck(evaluation.enabled);
          answer = JSON.stringify(success(flagName, evaluation));
        } catch {
          // the flag went away meanwhile: Fastify answers the 404
        }
      }
      if (answer === undefined) {
        leaveBody(request, body);
        this.handOff(request, response);
        return;
      }
      this.answer(response, headers, "no-store", answer, started);
    });
    return true;
  }
}
