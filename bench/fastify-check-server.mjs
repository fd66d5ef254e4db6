// The check as an encapsulated Fastify route (docs/performance.md, "One check handler"): the whole
// service is built as `npm start` builds it (same snapshot, same process heap), but the check is answered
// by a Fastify instance of its own with that one route, no global hooks and precomputed bodies. The
// handler does what the check does (key lookup and rules, evaluation, the check's headers, metrics) with
// Fastify's router, query parser, validator and request/reply objects on the way. It measures what the
// check would cost if the fast path were deleted and the route kept out of every global hook.
import Fastify from "fastify";
import { pino } from "pino";

// The server's build to use (BENCH_SERVER_MAIN names another build's main.js, as for `npm run bench`).
const dist = new URL(
  process.env.BENCH_SERVER_MAIN ? `file://${process.env.BENCH_SERVER_MAIN}/../` : "../packages/server/dist/src/",
  import.meta.url,
);
const from = (path) => import(new URL(path, dist).href);
const { buildApp } = await from("app.js");
const { loadConfig } = await from("kernel/config.js");
const { openDatabase } = await from("db/database.js");
const { AppError } = await from("kernel/errors.js");
const { CheckQuery } = await from("http/routes/check.routes.js");
const { CHECK_ROUTE } = await from("http/fast-routes.js");
const { Checker } = await from("features/evaluation/checker.js");
const { Metrics } = await from("features/metrics/metrics.js");
const { Credentials, presentedKey } = await from("http/key-credentials.js");
const { allows } = await from("http/route-access.js");
const { errorHandler } = await from("http/problem.js");
const { parseQueryString } = await from("http/querystring.js");
const { requestIdOf } = await from("http/request-id.js");
const { buildValidatorCompiler } = await from("http/validation.js");

const cacheControl = (cache) => (cache === undefined ? "no-store" : `private, max-age=${Math.floor(cache)}`);
const config = loadConfig();
const database = openDatabase(config);
const service = await buildApp({ config, database, logger: pino({ level: "warn" }) });
const snapshot = service.feed.snapshot;
const checker = new Checker(snapshot, service.recorder, { now: () => Date.now() }, Math.random);
const credentials = new Credentials(snapshot);
const metrics = new Metrics(snapshot);

const ENABLED = '{"enabled":true}';
const DISABLED = '{"enabled":false}';
const app = Fastify({
  logger: false,
  routerOptions: { ignoreTrailingSlash: true, maxParamLength: 4096, querystringParser: parseQueryString },
  requestIdHeader: false,
  genReqId: (request) => requestIdOf(request.headers),
});
app.setValidatorCompiler(buildValidatorCompiler());
app.setErrorHandler(errorHandler);
app.get(
  CHECK_ROUTE,
  {
    schema: { querystring: CheckQuery },
    onResponse: (request, reply, done) => {
      metrics.recordRequest(request.method, CHECK_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
      done();
    },
  },
  (request, reply) => {
    const { projectId, flagName } = request.params;
    const key = presentedKey(request.headers);
    const principal = key === undefined ? undefined : credentials.principalOf(key);
    if (principal === undefined) throw new AppError(401, "unauthorized", "Send an API key.");
    if (!allows(principal, "check", projectId)) throw new AppError(403, "forbidden", "This key may not check.");
    const { actorIds, cache } = request.query;
    const enabled = checker.check(projectId, flagName, actorIds).enabled;
    metrics.recordCheck(enabled);
    reply.headers({
      "x-content-type-options": "nosniff",
      "cache-control": cacheControl(cache),
      "x-request-id": request.id,
      "content-type": "application/json; charset=utf-8",
    });
    return reply.send(enabled ? ENABLED : DISABLED);
  },
);
await app.listen({ port: Number(process.env.PORT), host: process.env.HOST ?? "127.0.0.1" });
process.send?.("ready");
process.on("SIGTERM", () =>
  app
    .close()
    .then(() => service.close())
    .then(() => process.exit(0)),
);
