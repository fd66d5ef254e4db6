import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Fastify, { type FastifyRequest, type FastifyServerOptions, type preValidationHookHandler } from "fastify";
import type { Config } from "../kernel/config.js";
import { AppError } from "../kernel/errors.js";
import { NoQuery } from "../kernel/schemas.js";
import { answerClientError } from "./client-errors.js";
import { installMethodNotAllowed } from "./method-not-allowed.js";
import { errorHandler, sendProblem } from "./problem.js";
import { parseQueryString } from "./querystring.js";
import { requestIdOf } from "./request-id.js";
import { RequestLogController } from "./request-log.js";
import { inspectRequestStrings } from "./request-strings.js";
import { buildValidatorCompiler } from "./validation.js";

// The Fastify instance and the rules every request meets before a route sees it: the server it runs on
// (with the fast path's door in front), request logging, limits, timeouts, body parsing, validation and
// the route-level rules of the query, body and strings. app.ts builds it, then registers the routes.

const BODY_LIMIT = 1024 * 1024;

type NodeListener = (request: IncomingMessage, response: ServerResponse) => void;

/** What answers requests in front of Fastify's handler (the node:http adapter of the check and OFREP). */
export interface FrontDoor {
  readonly listener: NodeListener;
}

/** A pino logger or Fastify logger options; false for silence. */
export type AppLogger = FastifyServerOptions["loggerInstance"] | boolean;

const defaultEmptyBody: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === undefined) request.body = {};
  done();
};

/**
 * The Fastify instance on its node:http server; `frontDoor` puts the fast path in front of Fastify's own
 * handler, which `fastifyHandler` answers (the door hands it what it does not answer itself).
 */
export function createFastifyApp(config: Config, logger: AppLogger | undefined) {
  const loggerOptions = typeof logger === "object" ? { loggerInstance: logger } : { logger: logger ?? false };
  // Checks and OFREP evaluations the node:http adapter is sure of are answered in front of Fastify (see
  // NodeAdapter); set once the services exist (frontDoor). Until then, and for every other request,
  // Fastify's own handler runs.
  let adapter: FrontDoor | undefined;
  let fastifyHandler: NodeListener | undefined;
  const app = Fastify({
    ...loggerOptions,
    // Fastify's documented way to supply the server: the same node:http server it would create, with the
    // same settings (as in Fastify's getServerInstance), and the node:http adapter of the check and OFREP's
    // single evaluation in front of its handler.
    serverFactory: (handler, options) => {
      fastifyHandler = handler;
      const server = createServer(options.http ?? {}, (request, response) => {
        if (adapter === undefined) handler(request, response);
        else adapter.listener(request, response);
      });
      server.keepAliveTimeout = options.keepAliveTimeout as number;
      server.requestTimeout = options.requestTimeout as number;
      server.setTimeout(options.connectionTimeout as number);
      const maxRequestsPerSocket = Number(options.maxRequestsPerSocket ?? 0);
      if (maxRequestsPerSocket > 0) server.maxRequestsPerSocket = maxRequestsPerSocket;
      return server;
    },
    bodyLimit: BODY_LIMIT,
    // The client's address (request.ip) behind proxies: what rate limits and sign-in throttling count by.
    trustProxy: config.trustProxy as FastifyServerOptions["trustProxy"],
    // One line per request, at `debug` for reads answered well (see RequestLogController). Routes that set
    // `config.requestLogging: false` (the check: logging each would cost more than answering it) are not
    // logged per request; see the onRoute hook below.
    logController: new RequestLogController({
      disableRequestLogging: (request) =>
        (request as Partial<FastifyRequest>).routeOptions?.config.requestLogging === false,
    }),
    // 4,096 leaves room for a 256-character actor id percent-encoded at 12 characters per code point.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 4096, querystringParser: parseQueryString },
    clientErrorHandler: answerClientError,
    // A client that trickles its headers or body holds a socket for nothing: it is answered 408 and
    // closed once the header or request timeout passes. Node checks every connectionsCheckingInterval,
    // so the bound is the timeout plus at most one second. Idle keep-alive connections are not affected.
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    // Errors the router raises before any route is chosen are answered as problem details too.
    frameworkErrors: (error, _request, reply) => {
      const detail =
        error.code === "FST_ERR_MAX_PARAM_LENGTH"
          ? "A path segment is longer than 4,096 characters."
          : "The path is not valid: percent-encoding must spell UTF-8.";
      sendProblem(reply, new AppError(400, "invalid_request", detail));
    },
    ajv: { customOptions: { removeAdditional: false } },
    // Request ids name the request in logs and in the history; a sane incoming X-Request-Id is kept.
    requestIdHeader: false,
    genReqId: (request) => requestIdOf(request.headers),
  }).withTypeProvider<TypeBoxTypeProvider>();
  return {
    app,
    fastifyHandler: () => fastifyHandler as NodeListener,
    frontDoor: (door: FrontDoor) => {
      adapter = door;
    },
  };
}

/** The rules every request meets: validation, problem details, 405, body parsing, route-level checks. */
export function installRequestRules(app: ReturnType<typeof createFastifyApp>["app"]): void {
  app.setValidatorCompiler(buildValidatorCompiler());
  app.setErrorHandler(errorHandler);
  installMethodNotAllowed(app);
  // Only JSON bodies are accepted: anything else (text/plain included) is 415.
  app.removeContentTypeParser("text/plain");
  // Fastify refuses an empty body sent as JSON; a DELETE or POST with no body is fine here.
  const parseJson = app.getDefaultJsonParser("error", "error");
  // OFREP's evaluation context is the caller's own data, whose member names are attribute names: one
  // named `__proto__` or `constructor` is evaluated like any other, as the check and the local evaluator
  // do. JSON.parse makes such a member an own property, never a prototype, and OFREP's routes only read
  // the context (into objects without a prototype, ofrep.routes.ts), so they take bodies as JSON.parse
  // reads them. Every other route keeps refusing them: their bodies reach services and the database.
  const parseContext = app.getDefaultJsonParser("ignore", "ignore");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (body === "") return done(null, undefined);
    const evaluation = request.routeOptions.config?.access === "evaluate";
    (evaluation ? parseContext : parseJson)(request, body as string, done);
  });

  // Route-level rules, attached only where they apply so the check path carries none of them:
  // - unknown query parameters are refused everywhere, as unknown body fields are;
  // - a body left out counts as `{}` (every body field is optional where the operation allows it);
  // - strings must be well-formed Unicode and values nest at most MAX_NESTING levels; NUL characters are
  //   refused too wherever a value can reach the database (OFREP never does). The check is left out: it
  //   has no body, its query is flat, and percent-decoding never yields a lone surrogate.
  const storedStrings = inspectRequestStrings({ refuseNul: true });
  const evaluatedStrings = inspectRequestStrings({ refuseNul: false });
  app.addHook("onRoute", (route) => {
    // Nor does such a route need a child logger per request (an allocation): errors on it are logged by
    // the parent, without a request id.
    if (route.config?.requestLogging === false) route.childLoggerFactory = (logger) => logger;
    const access = route.config?.access;
    if (access === undefined || !route.schema) return;
    if (access === "public") {
      // Public routes keep their own query rules (the console's files, the provider's callback), but what
      // they read is inspected as everywhere: sign-in's e-mail, for one, reaches the database.
      if (route.schema.body !== undefined || route.schema.querystring !== undefined) {
        route.preValidation = [route.preValidation ?? [], storedStrings].flat() as preValidationHookHandler[];
      }
      return;
    }
    if (!route.schema.querystring) route.schema.querystring = NoQuery;
    const hooks: preValidationHookHandler[] = [];
    if (route.schema.body !== undefined) hooks.push(defaultEmptyBody);
    if (access === "evaluate") hooks.push(evaluatedStrings);
    else if (access !== "check") hooks.push(storedStrings);
    route.preValidation = [route.preValidation ?? [], hooks].flat() as preValidationHookHandler[];
  });
}
