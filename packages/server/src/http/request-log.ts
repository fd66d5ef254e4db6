import { type FastifyReply, type FastifyRequest, LogController } from "fastify";

/** Methods that change nothing: answered well, they are logged at `debug` only. */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The console asking whether it is signed in: `GET /whoami` answered 401 to a request that sent no key
 * (a missing or ended session). It happens at every load of the console's sign-in page, so it is a read
 * like the others, not a refusal worth a line at `info`; a wrong key still is.
 */
function signedInQuestion(request: FastifyRequest, status: number): boolean {
  return (
    status === 401 &&
    request.method === "GET" &&
    request.routeOptions.url === "/whoami" &&
    request.headers.authorization === undefined &&
    request.headers["x-api-key"] === undefined
  );
}

/** An OFREP event-stream token may ride in the query (EventSource sends no headers); it is not logged. */
const TOKEN_IN_QUERY = /([?&]token=)[^&#]*/gi;

/**
 * One log line per request, when it has been answered: method, URL, status, duration and the request id
 * (`reqId`, from the request's child logger), and the key that made it when one did. Fastify's own two lines
 * per request (`incoming request`, `request completed`), both at `info`, buried the first start's admin key
 * under the console's polling within seconds.
 *
 * The level says how much the line matters: a server error at `error`; a write, or a request refused (4xx),
 * at `info`; a read answered well (the console's polling, /healthz probes, streams), and the console's
 * "am I signed in?" (`GET /whoami` without a key, 401), at `debug`. Routes
 * marked `config.requestLogging: false` (checks, OFREP evaluations) are not logged per request at all.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {
    // The line is written when the answer is known (requestCompleted).
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const status = reply.statusCode;
    const level =
      error || status >= 500
        ? "error"
        : (status >= 400 && !signedInQuestion(request, status)) || !READS.has(request.method)
          ? "info"
          : "debug";
    const line: Record<string, unknown> = {
      method: request.method,
      url: request.url.replace(TOKEN_IN_QUERY, "$1…"),
      statusCode: status,
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (request.principal !== undefined) line.keyId = request.principal.keyId;
    if (error) line.err = error;
    reply.log[level](line, "request");
  }

  /** The error handler logs server errors itself (problem.ts); a refused request is the request's own line. */
  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    if (reply.statusCode >= 500) super.defaultErrorLog(error, request, reply);
  }

  /** A 404 is the request's own line, at `info`. */
  override routeNotFound(): void {}
}
