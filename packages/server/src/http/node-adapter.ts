import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { AnswerCheck } from "../features/evaluation/answer-check.js";
import { CHECK_ROUTE, JSON_TYPE, OFREP_EVALUATE_ROUTE } from "./fast-routes.js";
import type { Checker } from "../features/evaluation/checker.js";
import { readPlainCheck } from "../features/evaluation/plain-check.js";
import type { Principal } from "../access/principal.js";
import type { Metrics } from "../features/metrics/metrics.js";
import type { DurationSeries } from "../features/metrics/request-durations.js";
import type { AnswerOfrep } from "../features/ofrep/answer-ofrep.js";
import { leaveBody } from "../features/ofrep/buffered-body.js";
import { plainActors, plainEvaluationKey } from "../features/ofrep/plain-evaluation.js";
import { type Credentials, presentedKey } from "./key-credentials.js";
import { type Access, allows } from "./route-access.js";
import { isActive } from "../access/roles.js";
import type { PeopleState } from "../access/people-state.js";
import { corsHeadersWithoutOrigin } from "./cors.js";
import { requestIdOf } from "./request-id.js";
import { commonHeaders } from "./response-headers.js";

export interface NodeAdapterDeps {
  readonly answerCheck: AnswerCheck;
  readonly answerOfrep: AnswerOfrep;
  readonly checker: Checker;
  readonly credentials: Credentials;
  readonly people: PeopleState;
  readonly metrics: Metrics;
  /** CORS_ALLOWED_ORIGINS: with any, a request with an Origin header is left to Fastify and the CORS plugin. */
  readonly corsOrigins: readonly string[];
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The check's and OFREP single evaluation's second door: on node:http, in front of Fastify's handler, it
 * reads the requests it is sure of and calls the same answerCheck / answerOfrep as the Fastify routes,
 * writing the answer with the same header policy (commonHeaders, and CORS's for a request without
 * Origin), without Fastify's per-request lifecycle, which costs more than the check itself
 * (docs/performance.md). Everything else goes to Fastify from the start, so every error keeps its one
 * home: a request it does not read plainly (plain-check.ts, plain-evaluation.ts), a key that may not do
 * it, an unknown project or flag, an Origin under CORS, a closing server. An OFREP body it read and did
 * not take is handed to Fastify with the request (buffered-body.ts). Off with RATE_LIMIT_PER_MINUTE,
 * whose plugin must count every request.
 */
export class NodeAdapter {
  private open = true;
  private readonly cors: boolean;
  private readonly corsHeaders: readonly string[];
  private readonly checks: DurationSeries;
  private readonly evaluations: DurationSeries;

  constructor(
    private readonly deps: NodeAdapterDeps,
    private readonly fastify: Handler,
  ) {
    this.cors = deps.corsOrigins.length > 0;
    this.corsHeaders = Object.entries(corsHeadersWithoutOrigin(deps.corsOrigins)).flat();
    this.checks = deps.metrics.requestSeries("GET", CHECK_ROUTE, 200);
    this.evaluations = deps.metrics.requestSeries("POST", OFREP_EVALUATE_ROUTE, 200);
  }

  /** The server's request listener. */
  readonly listener: Handler = (request, response) => {
    const taken =
      this.open && (request.method === "GET" ? this.check(request, response) : this.evaluate(request, response));
    if (!taken) this.fastify(request, response);
  };

  /** From now on every request goes to Fastify (which answers 503 while it closes). */
  close(): void {
    this.open = false;
  }

  private check(request: IncomingMessage, response: ServerResponse): boolean {
    const read = readPlainCheck(request.url as string);
    if (read === undefined) return false;
    const started = performance.now();
    const principal = this.principal(request.headers, "check", read.projectId);
    if (principal === undefined) return false;
    let answer: ReturnType<AnswerCheck>;
    try {
      answer = this.deps.answerCheck(
        read.projectId,
        principal.environment,
        read.flagName,
        read.actorIds,
        read.cache,
        read.attributes,
      );
    } catch {
      return false; // an unknown project or flag: Fastify answers the 404
    }
    this.write(response, request.headers, answer.cacheControl, answer.body);
    this.checks.observe((performance.now() - started) / 1000);
    return true;
  }

  private evaluate(request: IncomingMessage, response: ServerResponse): boolean {
    if (request.method !== "POST") return false;
    const key = plainEvaluationKey(request.url as string, request.headers);
    if (key === undefined) return false;
    const started = performance.now();
    const principal = this.principal(request.headers, "evaluate", undefined);
    if (principal === undefined) return false;
    const projectId = principal.projectId as string; // "evaluate" is never an admin key's
    if (!this.deps.checker.has(projectId, principal.environment, key)) return false;
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const actors = this.open ? plainActors(body.toString("utf8")) : undefined;
      let answer: string | undefined;
      try {
        if (actors !== undefined) answer = this.deps.answerOfrep(projectId, principal.environment, key, actors);
      } catch {
        // the flag went away meanwhile: Fastify answers the 404
      }
      if (answer === undefined) {
        leaveBody(request, body);
        this.fastify(request, response);
        return;
      }
      this.write(response, request.headers, "no-store", answer);
      this.evaluations.observe((performance.now() - started) / 1000);
    });
    return true;
  }

  /**
   * The principal of the request's key when it may do `access` on the project and the request is one the
   * adapter may answer under CORS (no Origin when CORS is on); otherwise undefined, and Fastify answers.
   */
  private principal(
    headers: IncomingHttpHeaders,
    access: Exclude<Access, "public">,
    projectId: string | undefined,
  ): Principal | undefined {
    if (this.cors && headers.origin !== undefined) return undefined;
    const key = presentedKey(headers);
    if (key === undefined) return undefined;
    const principal = this.deps.credentials.principalOf(key);
    // A person's key whose person was disabled goes the slow way, which answers its 401.
    const people = this.deps.people;
    return principal !== undefined && isActive(principal, people) && allows(principal, access, projectId, people)
      ? principal
      : undefined;
  }

  /** Writes a 200 JSON answer with the headers a Fastify answer carries, in one flat list node:http writes as it is. */
  private write(response: ServerResponse, headers: IncomingHttpHeaders, cacheControl: string, body: string): void {
    const list: (string | number)[] = commonHeaders(requestIdOf(headers), cacheControl);
    list.push("content-type", JSON_TYPE, "content-length", Buffer.byteLength(body));
    if (this.cors) list.push(...this.corsHeaders);
    response.writeHead(200, list);
    response.end(body);
  }
}
