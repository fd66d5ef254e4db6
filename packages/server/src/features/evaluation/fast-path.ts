import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { type Access, allows, type Credentials, presentedKey } from "../../http/auth.js";
import { requestIdOf } from "../../http/request-id.js";
import type { Metrics } from "../metrics/metrics.js";
import type { DurationSeries } from "../metrics/request-durations.js";
import type { Checker } from "./checker.js";
import type { Principal } from "./snapshot.js";

/**
 * Actor ids the fast paths read themselves: characters that mean themselves in a query string (no `%`,
 * no `+`, which reads as a space, no `&`, `=` or `#`), within the actor id rules. Others go to Fastify.
 */
const PLAIN_ACTOR_ID = /^[A-Za-z0-9._~:@!$*,()/-]{1,256}$/;

/** Whether an actor id is one the fast paths read themselves (see PLAIN_ACTOR_ID; `.` and `..` are not ids). */
export const isPlainActorId = (id: unknown): id is string =>
  typeof id === "string" && PLAIN_ACTOR_ID.test(id) && id !== "." && id !== "..";

const JSON_TYPE = "application/json; charset=utf-8";

export interface FastPathOptions {
  /** Headers CORS adds to an answer to a request without Origin, as names and values (see corsHeadersWithoutOrigin). */
  readonly corsHeaders: readonly string[];
  /** Whether CORS is on: then a request with an Origin header is left to Fastify and the CORS plugin. */
  readonly cors: boolean;
}

/**
 * What the check's and OFREP's fast paths share: they answer a 200 on node:http in front of Fastify, with
 * the headers and metrics of the Fastify route they stand for, and step aside (every request to Fastify,
 * which answers 503) once the server closes. Each decides for itself which requests it is sure of.
 */
export abstract class FastPath {
  protected open = true;
  private readonly answered: DurationSeries;
  /** Requests this fast path has answered (the rest went to Fastify): for tests that it is in use. */
  served = 0;

  constructor(
    protected readonly checker: Checker,
    protected readonly metrics: Metrics,
    private readonly credentials: Credentials,
    private readonly options: FastPathOptions,
    method: string,
    route: string,
  ) {
    this.answered = metrics.requestSeries(method, route, 200);
  }

  /** From now on every request goes to Fastify (which answers 503 while it closes). */
  close(): void {
    this.open = false;
  }

  /**
   * The principal of the request's key when it may do `access` on the project and the request is one the
   * fast path may answer under CORS (no Origin when CORS is on); otherwise undefined, and Fastify answers
   * (the 401 or 403 has its one home there).
   */
  protected principalAllowed(
    headers: IncomingHttpHeaders,
    access: Exclude<Access, "public">,
    projectId: string | undefined,
  ): Principal | undefined {
    if (this.options.cors && headers.origin !== undefined) return undefined;
    const key = presentedKey(headers);
    if (key === undefined) return undefined;
    const principal = this.credentials.principalOf(key);
    return principal !== undefined && allows(principal, access, projectId) ? principal : undefined;
  }

  /**
   * Writes the 200 JSON answer with the headers every keyed Fastify answer carries (nosniff,
   * Cache-Control, X-Request-Id, and CORS's for a request without Origin), in one flat list that
   * node:http writes as it is, and notes its duration since `started` (performance.now()).
   */
  protected answer(
    response: ServerResponse,
    requestHeaders: IncomingMessage["headers"],
    cacheControlValue: string,
    body: string,
    started: number,
  ): void {
    const headers: (string | number)[] = [
      "x-content-type-options",
      "nosniff",
      "cache-control",
      cacheControlValue,
      "x-request-id",
      requestIdOf(requestHeaders),
      "content-type",
      JSON_TYPE,
      "content-length",
      Buffer.byteLength(body),
    ];
    if (this.options.cors) headers.push(...this.options.corsHeaders);
    response.writeHead(200, headers);
    response.end(body);
    this.served++;
    this.answered.observe((performance.now() - started) / 1000);
  }
}
