import type { FastifyInstance } from "fastify";
import { type Clock, isoTime, type RandomSource, systemClock } from "./kernel/clock.js";
import type { Config } from "./kernel/config.js";
import type { DatabaseHandle } from "./db/database.js";
import { migrateToLatest } from "./db/migrate.js";
import { actorsModule } from "./modules/actors.module.js";
import { ActorSchema } from "./features/actors/actor.schemas.js";
import { environmentsModule } from "./modules/environments.module.js";
import { flagsModule } from "./modules/flags.module.js";
import { historyModule } from "./modules/history.module.js";
import { keysModule } from "./modules/keys.module.js";
import { peopleModule } from "./modules/people.module.js";
import { projectsModule } from "./modules/projects.module.js";
import { segmentsModule } from "./modules/segments.module.js";
import { changeRequestsModule } from "./modules/change-requests.module.js";
import { webhooksModule } from "./modules/webhooks.module.js";
import { ChangeFeed } from "./features/evaluation/change-feed.js";
import { pruneChangeSets } from "./features/evaluation/feed.repository.js";
import { PostgresListener } from "./features/evaluation/postgres-notifications.js";
import { checkRoutes } from "./http/routes/check.routes.js";
import { checkAnswers } from "./features/evaluation/answer-check.js";
import { CheckRecorder } from "./features/evaluation/check-recorder.js";
import { UsageCounter } from "./features/usage/usage-counter.js";
import { UsageRepository } from "./features/usage/usage.repository.js";
import { usageModule } from "./modules/usage.module.js";
import { flagsAsCodeModule } from "./modules/flags-as-code.module.js";
import { StaleDetection } from "./features/lifecycle/stale-detection.js";
import { Checker } from "./features/evaluation/checker.js";
import { Snapshot } from "./features/evaluation/snapshot.js";
import { EventSchema } from "./features/history/event.schemas.js";
import { pruneEvents } from "./write-path/event-log.js";
import { createUnitOfWork } from "./write-path/create-unit-of-work.js";
import type { UnitOfWork } from "./write-path/unit-of-work.js";
import { ExplanationSchema } from "./http/routes/flag.routes.js";
import { Metrics } from "./features/metrics/metrics.js";
import { metricsRoutes } from "./http/routes/metrics.routes.js";
import { ofrepAnswers } from "./features/ofrep/answer-ofrep.js";
import { ofrepRoutes } from "./http/routes/ofrep.routes.js";
import { FlagSchema } from "./features/flags/flag.schemas.js";
import { healthRoutes } from "./http/routes/health.routes.js";
import { ApiKeySchema, CreatedApiKeySchema } from "./features/keys/key.schemas.js";
import { ProjectSchema } from "./features/projects/project.schemas.js";
import { SegmentSchema } from "./features/segments/segment.schemas.js";
import { WebhookDispatcher } from "./features/webhooks/dispatcher.js";
import { JobRunner } from "./kernel/job-runner.js";
import { pruneDeliveries } from "./features/webhooks/webhook.repository.js";
import {
  CreatedWebhookSchema,
  DeliverySchema,
  DeliveryWithPayloadSchema,
  WebhookSchema,
} from "./features/webhooks/webhook.schemas.js";
import { StreamTokens } from "./features/ofrep/stream-tokens.js";
import { ProjectStreams } from "./features/stream/project-streams.js";
import { streamRoutes } from "./http/routes/stream.routes.js";
import { authenticate } from "./http/auth.js";
import { Credentials } from "./http/key-credentials.js";
import { ownOriginOf } from "./http/same-origin.js";
import { pruneSignIns } from "./features/people/sessions.js";
import { registerConsole } from "./http/console.js";
import { registerCors } from "./http/cors.js";
import { NodeAdapter } from "./http/node-adapter.js";
import { registerApiReference, registerOpenApi } from "./http/openapi.js";
import { bulkEvaluationRateLimit, registerRateLimits } from "./http/rate-limits.js";
import { setResponseHeaders } from "./http/response-headers.js";
import { Membership } from "@flagstaff/core/schemas";
import { Problem } from "./http/schemas.js";
import { keepNextTickMapsAlive } from "./kernel/next-tick-maps.js";
import { type AppLogger, createFastifyApp, installRequestRules } from "./http/fastify-app.js";

export const API_VERSION = "1.0.0";
/** Change sets older than this are pruned; an instance further behind reloads the stream instead. */
const FEED_RETENTION_MS = 60 * 60 * 1000;
const FEED_PRUNE_EVERY_MS = 10 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Longest an OFREP refetch waits for the version its event stream named to reach this instance. */
const OFREP_FRESHNESS_WAIT_MS = 1000;
/** How long shutdown waits for requests in flight before it cuts the connections still open. */
const SHUTDOWN_GRACE_MS = 5000;
/** Finished webhook deliveries are kept this long for the deliveries list, then pruned. */
const DELIVERY_RETENTION_MS = 30 * DAY_MS;

export interface AppDeps {
  readonly config: Config;
  readonly database: DatabaseHandle;
  readonly clock?: Clock;
  readonly random?: RandomSource;
  /** A pino logger or Fastify logger options; false for silence. */
  readonly logger?: AppLogger;
}

export interface Service {
  readonly app: FastifyInstance;
  readonly feed: ChangeFeed;
  /** Every write goes through it; its bus carries each committed write's events. */
  readonly work: UnitOfWork;
  /** Sends webhooks; tests stop it to leave deliveries queued. */
  readonly dispatcher: WebhookDispatcher;
  /** Runs what is done later (webhook deliveries, scheduled changes); tests run its jobs at once. */
  readonly jobs: JobRunner;
  /** Prunes the change log and (with HISTORY_RETENTION_DAYS) the history now; the periodic timer calls it. */
  prune(): Promise<void>;
  readonly recorder: CheckRecorder;
  /** Counts evaluations; `flush` writes them (and latestCheckedAt). */
  readonly usage: UsageCounter;
  /** The admin key created at this start because none existed, to be shown once; otherwise undefined. */
  readonly generatedAdminKey: string | undefined;
  /** Stops accepting, finishes in-flight requests, flushes pending writes and closes the database. */
  close(): Promise<void>;
}

/**
 * Wires the whole service: migrations, snapshot, services, routes. Nothing listens yet, so tests and
 * `main.ts` share it, and several instances can live in one process.
 */
export async function buildApp(deps: AppDeps): Promise<Service> {
  // main.ts has done it already; a server built in-process gets it here (see next-tick-maps.ts).
  keepNextTickMapsAlive();
  const { config, database } = deps;
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? Math.random;
  const db = database.db;

  await migrateToLatest(database);

  const { app, fastifyHandler, frontDoor } = createFastifyApp(config, deps.logger);

  const postgres = database.dialect === "postgres";
  const snapshot = new Snapshot();
  const metrics = new Metrics(snapshot);
  const feed = new ChangeFeed(db, app.log, {
    snapshot,
    ...(postgres ? { repeatableRead: true } : {}),
    // Lag is measured for other instances' changes only: this instance's own write may be read back
    // from the log when its notification wins the race against the write's own return.
    onCaughtUp: (set) => {
      if (set.at !== undefined && set.origin !== work.instanceId) metrics.recordFeedLag((Date.now() - set.at) / 1000);
    },
  });
  // Everything done later rather than in a request: webhook deliveries, scheduled changes.
  const jobs = new JobRunner(app.log, config.jobsPollIntervalMs);
  const dispatcher = new WebhookDispatcher(
    db,
    clock,
    app.log,
    metrics,
    {
      postgres,
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
      timeoutMs: config.webhookTimeoutMs,
      retryBaseMs: config.webhookRetryBaseMs,
      retryWindowMs: config.webhookRetryWindowMs,
      concurrency: config.webhookConcurrency,
      random,
    },
    jobs,
  );
  const work = createUnitOfWork(database, clock, app.log, {
    // The outbox: a write's events become webhook deliveries in its own transaction.
    enqueue: (trx, events, hooks) => dispatcher.enqueue(trx, events, hooks),
  });
  // This instance's own writes reach its snapshot and its metrics through the bus, after commit.
  work.bus.subscribe((committed) => feed.applyOwn(committed.changeSet));
  work.bus.subscribe((committed) => {
    for (const event of committed.events) metrics.recordEvent(event.type);
  });
  // Listen before loading, so nothing committed between the load's read and the first notification is missed.
  const listener = postgres ? new PostgresListener(config.databaseLocation, feed, app.log) : undefined;
  await listener?.start();
  await feed.load();
  const recorder = new CheckRecorder(db, deps.database.dialect === "postgres");
  const usageRows = new UsageRepository(db, postgres);
  const counter = new UsageCounter(usageRows, recorder, config.usage.counting);
  const checker = new Checker(feed.snapshot, counter, clock, random);
  // Each feature's module builds its services; its routes are registered below, in the document's order.
  const featureDeps = { db, work, clock };
  const projects = projectsModule(featureDeps, config.environmentsMaxPerProject);
  const environments = environmentsModule(featureDeps, config.environmentsMaxPerProject);
  const keys = keysModule(featureDeps, feed.snapshot.people);
  const flags = flagsModule({ ...featureDeps, recorder, snapshot: feed.snapshot, stale: config.usage });
  const segments = segmentsModule(featureDeps);
  const changeRequests = changeRequestsModule({
    ...featureDeps,
    flags: flags.services.flags,
    people: feed.snapshot.people,
    jobs,
    log: app.log,
    postgres,
    scheduledChangeMaxAttempts: config.scheduledChangeMaxAttempts,
  });
  const usage = usageModule({
    ...featureDeps,
    repository: usageRows,
    recorder,
    snapshot: feed.snapshot,
    jobs,
    config: config.usage,
  });
  const flagsAsCode = flagsAsCodeModule({
    ...featureDeps,
    postgres,
    writes: {
      flags: flags.services.flags,
      segments: segments.services.segments,
      environments: environments.services.environments,
      changeRequests: changeRequests.services.changeRequests,
    },
  });
  const staleRules = new StaleDetection(db, work, usageRows, clock, {
    ...config.usage,
    checkIntervalMs: config.usage.staleCheckIntervalMs,
  });
  jobs.add(staleRules);
  const actors = actorsModule(featureDeps);
  const history = historyModule(db);
  const webhooks = webhooksModule({
    ...featureDeps,
    dispatcher,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
  });
  const generatedAdminKey = await keys.services.keys.ensureAdminKey(config.adminApiKey);
  const ownOrigin = ownOriginOf(config.publicUrl);
  // Built before the authentication hook below, which reads its sessions.
  const people = peopleModule({ ...featureDeps, config, people: feed.snapshot.people, log: app.log, ownOrigin });
  const { sessions } = people.services;

  installRequestRules(app);

  await registerOpenApi(app, API_VERSION);
  await registerApiReference(app);
  await registerRateLimits(app, config);
  app.addHook("onRequest", setResponseHeaders);
  // Before authentication: preflights carry no key and are answered by the CORS hook itself.
  await registerCors(app, config.corsAllowedOrigins);
  const streamTokens = new StreamTokens(feed.snapshot, clock);
  const credentials = new Credentials(feed.snapshot);
  app.addHook("onRequest", authenticate(credentials, feed.snapshot.people, streamTokens, sessions, ownOrigin));
  app.addHook("onResponse", (request, reply, done) => {
    metrics.recordRequest(
      request.method,
      request.routeOptions.url ?? "unmatched",
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  for (const schema of [
    Problem,
    ProjectSchema,
    ApiKeySchema,
    CreatedApiKeySchema,
    FlagSchema,
    ActorSchema,
    SegmentSchema,
    EventSchema,
    WebhookSchema,
    CreatedWebhookSchema,
    DeliverySchema,
    DeliveryWithPayloadSchema,
    Membership,
    ExplanationSchema,
  ]) {
    app.addSchema(schema);
  }
  healthRoutes(app, () => database.ping());
  projects.routes(app);
  keys.routes(app);
  people.routes(app);
  environments.routes(app);
  flags.routes(app);
  changeRequests.routes(app);
  usage.routes(app);
  flagsAsCode.routes(app);
  // The check's and the single OFREP evaluation's answers, one each, called by their Fastify routes and
  // by the node:http adapter alike.
  const answerCheck = checkAnswers(checker, metrics);
  const answerOfrep = ofrepAnswers(checker, metrics);
  checkRoutes(app, answerCheck);
  // Rate limiting counts every request in its plugin's hook, so with it on every check and evaluation
  // goes through Fastify.
  if (config.rateLimitPerMinute === 0) {
    const deps = {
      answerCheck,
      answerOfrep,
      checker,
      credentials,
      people: feed.snapshot.people,
      metrics,
      corsOrigins: config.corsAllowedOrigins,
    };
    const door = new NodeAdapter(deps, fastifyHandler());
    app.addHook("preClose", (done) => {
      door.close();
      done();
    });
    frontDoor(door);
  }
  metricsRoutes(app, metrics, config.metricsPublic);
  const streams = new ProjectStreams(
    db,
    feed.snapshot,
    app.log,
    {
      heartbeatMs: config.streamHeartbeatMs,
      maxPerKey: config.streamMaxPerKey,
      ofrepMaxPerKey: config.ofrepStreamMaxPerKey,
      maxPerInstance: config.streamMaxPerInstance,
      stallTimeoutMs: config.streamStallTimeoutMs,
      replayMaxVersions: config.streamReplayMaxVersions,
      replayMaxChars: config.streamReplayMaxBytes,
    },
    { live: (held) => sessions.live(held), intervalMs: config.streamSessionCheckMs },
    metrics,
  );
  // A session ended here ends its streams at once; one ended elsewhere, at the streams' next check.
  sessions.ended.subscribe((ended) => streams.endSessions(ended));
  ofrepRoutes(app, checker, metrics, {
    snapshot: feed.snapshot,
    streams,
    tokens: streamTokens,
    awaitVersion: (projectId, version) => feed.reach(projectId, version, OFREP_FRESHNESS_WAIT_MS),
    bodyLimit: config.ofrepBodyLimitBytes,
    answerOfrep,
    rateLimit: bulkEvaluationRateLimit(config),
    now: () => clock.now(),
  });
  segments.routes(app);
  actors.routes(app);
  history.routes(app);
  streamRoutes(app, streams, feed.snapshot);
  webhooks.routes(app);
  await registerConsole(app);
  app.get("/openapi.json", { config: { access: "public" }, schema: { hide: true, security: [] } }, async () =>
    app.swagger(),
  );

  const flushTimer = setInterval(() => {
    recorder.flush().catch((error) => app.log.warn({ err: error }, "could not write latestCheckedAt; will retry"));
  }, config.checkFlushIntervalMs);
  flushTimer.unref();
  const usageTimer = setInterval(() => {
    counter.flush().catch((error) => app.log.warn({ err: error }, "could not write usage counts; will retry"));
  }, config.usage.flushIntervalMs);
  usageTimer.unref();

  const prune = async () => {
    const now = clock.now();
    await pruneChangeSets(db, isoTime(now - FEED_RETENTION_MS));
    if (config.historyRetentionDays > 0) await pruneEvents(db, isoTime(now - config.historyRetentionDays * DAY_MS));
    await pruneDeliveries(db, isoTime(now - DELIVERY_RETENTION_MS));
    await pruneSignIns(db, isoTime(now), isoTime(now - config.sessionIdleMs));
  };

  // The safety net under notifications: compare versions with the database; prune the change log and history.
  let lastPrune = clock.now();
  const feedTimer = setInterval(() => {
    feed.reconcile().catch((error) => app.log.warn({ err: error }, "could not reconcile with the database"));
    if (clock.now() - lastPrune >= FEED_PRUNE_EVERY_MS) {
      lastPrune = clock.now();
      prune().catch((error) => app.log.warn({ err: error }, "could not prune the change log or the history"));
    }
  }, config.feedPollIntervalMs);
  feedTimer.unref();

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      clearInterval(flushTimer);
      clearInterval(usageTimer);
      clearInterval(feedTimer);
      // Connections of requests still in flight are closed as soon as they are answered: otherwise a
      // keep-alive client would hold the server open until its idle timeout. (Node reads this value
      // when each response finishes, so it costs requests nothing until shutdown.)
      app.server.keepAliveTimeout = 1;
      // Streams never end by themselves: end them, or closing would wait for them.
      streams.closeAll();
      // A connection the server still counts as busy after this grace (seen: a fetch client that aborted
      // a stream leaves one) is cut rather than allowed to hold the shutdown forever.
      const cut = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      cut.unref();
      await app.close();
      clearTimeout(cut);
      await dispatcher.stop();
      await jobs.stop();
      await listener?.stop();
      try {
        await counter.flush();
      } catch (error) {
        app.log.error({ err: error }, "could not write usage counts at shutdown");
      }
      try {
        await recorder.flush();
      } catch (error) {
        app.log.error({ err: error }, "could not write latestCheckedAt at shutdown");
      }
      await database.close();
    })();
    return closing;
  };

  await app.ready();
  jobs.start();
  return { app, feed, work, dispatcher, jobs, prune, recorder, usage: counter, generatedAdminKey, close };
}
