import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { ResolutionErrorCode } from "@flagstaff/core";
import type { RateLimitOptions } from "@fastify/rate-limit";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";

import { AppError } from "../../kernel/errors.js";
import { errorHandler, toAppError } from "../problem.js";
import { errorResponses } from "../schemas.js";
import { JSON_TYPE, OFREP_EVALUATE_ROUTE } from "../fast-routes.js";
import type { TypedApp } from "../typed-app.js";
import type { Attributes, Checker } from "../../features/evaluation/checker.js";
import type { Snapshot } from "../../features/evaluation/snapshot.js";
import type { Metrics } from "../../features/metrics/metrics.js";
import type { ProjectStreams } from "../../features/stream/project-streams.js";
import {
  EventStreamAnswer,
  LastEventIdHeaders,
  lastEventId,
  openEventStream,
  VERSION,
} from "../../features/stream/event-stream-response.js";
import { FanOut } from "../../features/stream/fan-out.js";
import { admitStream } from "../../features/stream/stream-admission.js";
import {
  OfrepBulk,
  OfrepBulkFailure,
  OfrepConfiguration,
  OfrepEvaluation,
  type OfrepEvaluationRequest,
  OfrepEventStream,
  OfrepFailure,
  OfrepRequest,
  OfrepServerFailure,
} from "@flagstaff/core/schemas";
import { type AnswerOfrep, OfrepEvaluationError, type OfrepTarget } from "../../features/ofrep/answer-ofrep.js";
import { replayBufferedBody } from "../../features/ofrep/buffered-body.js";
import { refuseOversizedContext } from "../../features/ofrep/context-limits.js";
import { boundariesPassed } from "../../features/ofrep/time-boundaries.js";
import { BulkAnswers } from "../../features/ofrep/bulk-body.js";
import type { StreamTokens } from "../../features/ofrep/stream-tokens.js";

/** What the OFREP event stream needs besides the checker. */
export interface OfrepStreaming {
  readonly snapshot: Snapshot;
  readonly streams: ProjectStreams;
  readonly tokens: StreamTokens;
  /**
   * Resolves once this instance's snapshot holds the project at the version given, or after a short
   * wait: a refetch an event stream asked for may reach another instance than the one that sent it.
   */
  awaitVersion(projectId: string, version: number): Promise<void>;
  /** The largest evaluation body read, in bytes (OFREP_BODY_LIMIT_BYTES). */
  readonly bodyLimit: number;
  /** The single evaluation's answer, shared with the node:http adapter. */
  readonly answerOfrep: AnswerOfrep;
  /** The bulk evaluation's rate limit (http/rate-limits.ts). */
  readonly rateLimit: RateLimitOptions;
  /** The evaluation time (`$now` in rules), in ms since the epoch: the bulk ETag follows time windows. */
  now(): number;
}

const EVENT_STREAM_PATH = "/ofrep/v1/event-stream";

/** What OFREP's evaluations are sent (@flagstaff/core/schemas' OfrepRequest). */
type OfrepBody = OfrepEvaluationRequest;

/**
 * What a context names: the actors (its targeting key first, then any extra `actorIds`) and its other
 * members, the attributes rules read (OpenFeature's context carries them natively).
 */
function targetOf(body: OfrepBody | undefined): OfrepTarget {
  const context = body?.context;
  if (!context) return { actors: [], attributes: undefined };
  const actors = context.actorIds ? [...context.actorIds] : [];
  if (context.targetingKey !== undefined) actors.unshift(context.targetingKey);
  let attributes: Record<string, unknown> | undefined;
  for (const name of Object.keys(context)) {
    if (name === "targetingKey" || name === "actorIds") continue;
    attributes ??= Object.create(null) as Record<string, unknown>;
    attributes[name] = context[name];
  }
  return { actors, attributes: attributes as Attributes | undefined };
}

/**
 * An ETag for a bulk answer: a digest of the project, the environment, the version of that environment's
 * evaluation state and the context, so it changes when any flag's answer may change or the context does, and two projects never
 * share one (a key of one project presenting another's tag gets the full answer, never a 304). The key
 * and the stream-token window are in it too: the answer advertises an event stream with a token of that
 * key, and a 304 must never leave a client holding an expired token (it gets a 200 with a fresh one).
 */
function bulkTag(
  projectId: string,
  environment: string,
  keyId: string,
  window: number,
  version: number,
  body: OfrepBody | undefined,
  timeBoundaries: number,
) {
  const digest = createHash("sha256")
    .update(JSON.stringify([projectId, environment, version, body?.context ?? {}, keyId, window, timeBoundaries]))
    .digest("base64url")
    .slice(0, 32);
  return `"${digest}"`;
}

/** OFREP clients add query parameters of their own (flagConfigEtag, …) and will add more: they are ignored. */
const AnyQuery = Type.Object({}, { additionalProperties: true, description: "Ignored" });

/** Whether an If-None-Match header names the tag (weak comparison, as RFC 9110 asks for GET-like reads). */
function matches(ifNoneMatch: string | undefined, tag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === tag);
}

/**
 * OFREP errors keep the protocol's shapes for what the protocol defines (400, 404, 500); 401, 403,
 * 413, 415 and 429 keep the service's problem details, which the protocol leaves open.
 */
function ofrepErrors(single: boolean, bodyLimit: number) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    if (appError.status === 413) {
      const detail = `OFREP evaluation bodies are limited to ${bodyLimit.toLocaleString("en-US")} bytes (OFREP_BODY_LIMIT_BYTES).`;
      return errorHandler(new AppError(413, "payload_too_large", detail), request, reply);
    }
    const key = (request.params as { key?: string } | undefined)?.key ?? "";
    if (error instanceof OfrepEvaluationError) {
      return reply.code(400).send({ key, errorCode: error.errorCode, errorDetails: error.detail });
    }
    if (appError.status === 400) {
      const errorCode: ResolutionErrorCode = /not valid JSON/.test(appError.detail) ? "PARSE_ERROR" : "INVALID_CONTEXT";
      const body = { errorCode, errorDetails: appError.detail };
      return reply.code(400).send(single ? { key, ...body } : body);
    }
    if (appError.code === "flag_not_found") {
      const errorCode: ResolutionErrorCode = "FLAG_NOT_FOUND";
      return reply.code(404).send({ key, errorCode, errorDetails: appError.detail });
    }
    if (appError.status >= 500 && appError.status !== 503) {
      request.log.error({ err: error }, "request failed");
      return reply.code(500).send({ errorDetails: "Something went wrong on our side; it has been logged." });
    }
    return errorHandler(error, request, reply);
  };
}

export function ofrepRoutes(app: TypedApp, checker: Checker, metrics: Metrics, streaming: OfrepStreaming): void {
  for (const schema of [OfrepEvaluation, OfrepFailure, OfrepEventStream, OfrepBulk, OfrepBulkFailure]) {
    app.addSchema(schema);
  }
  const { snapshot, streams, tokens, bodyLimit, answerOfrep } = streaming;
  const bulk = new BulkAnswers(checker, metrics, { now: streaming.now });
  /** Bulk answers to make, 2 ms of the event loop per turn (each takes about 0.7 ms at 10,000 flags). */
  const bulkTurns = new FanOut<FastifyReply>(2, 1);

  app.post(
    OFREP_EVALUATE_ROUTE,
    {
      // A body the node:http adapter read and left to Fastify is given back here.
      preParsing: replayBufferedBody,
      // Any key may evaluate, browsers' included: bodies are small, and are refused past a context's
      // limits before anything else reads them (see context-limits.ts).
      bodyLimit,
      preValidation: refuseOversizedContext,
      // Evaluations are the check's twins: not logged one by one either.
      config: { access: "evaluate", requestLogging: false },
      errorHandler: ofrepErrors(true, bodyLimit),
      schema: {
        tags: ["openfeature"],
        summary: "OFREP: evaluate one flag (extension)",
        description:
          "OpenFeature Remote Evaluation Protocol. The API key (any role, sent as Bearer or X-API-Key) names the " +
          "project. context.targetingKey is the actor; context.actorIds adds more; the context's other members are " +
          "the attributes the flag's rules read. The value is of the flag's type.",
        params: Type.Object({ key: Type.String() }),
        querystring: AnyQuery,
        body: OfrepRequest,
        response: {
          200: Type.Ref("OfrepEvaluation"),
          400: Type.Ref("OfrepFailure"),
          404: Type.Ref("OfrepFailure"),
          500: OfrepServerFailure,
          ...errorResponses(401, 403, 413, 415, 429),
        },
      },
    },
    (request, reply) => {
      const principal = request.principal as NonNullable<typeof request.principal>;
      const key = request.params.key;
      // The body is written out already: Fastify sends a string with a JSON type as it is.
      const target = targetOf(request.body as OfrepBody);
      const body = answerOfrep(
        principal.projectId as string,
        principal.environment,
        key,
        target.actors,
        target.attributes,
      );
      return reply.header("content-type", JSON_TYPE).send(body);
    },
  );

  app.post(
    "/ofrep/v1/evaluate/flags",
    {
      bodyLimit,
      preValidation: refuseOversizedContext,
      // Evaluations are the check's twins: not logged one by one either.
      // Check keys are public: each client address gets its own budget (OFREP_BULK_RATE_LIMIT_PER_MINUTE).
      config: { access: "evaluate", requestLogging: false, rateLimit: streaming.rateLimit },
      errorHandler: ofrepErrors(false, bodyLimit),
      schema: {
        tags: ["openfeature"],
        summary: "OFREP: evaluate every flag of the key's project (extension)",
        description:
          "Answers with an ETag; a request whose If-None-Match names it gets 304 until a flag of the project " +
          "or the context changes. `eventStreams` advertises the event stream (OFREP ADR-0008): a provider " +
          "that follows it refetches when told to rather than polling. A refetch it sends with " +
          "`flagConfigEtag` (the message's `etag`) is answered once this instance has that version, or after " +
          "at most a second. A check key's bulk evaluations are limited per client address " +
          "(OFREP_BULK_RATE_LIMIT_PER_MINUTE, 300 by default): past it, 429 with Retry-After.",
        headers: Type.Object({ "if-none-match": Type.Optional(Type.String()) }),
        querystring: AnyQuery,
        body: OfrepRequest,
        response: {
          200: Type.Ref("OfrepBulk"),
          304: Type.Null({ description: "Not modified" }),
          400: Type.Ref("OfrepBulkFailure"),
          500: OfrepServerFailure,
          ...errorResponses(401, 403, 413, 415, 429),
        },
      },
    },
    (request, reply) => {
      const principal = request.principal as NonNullable<typeof request.principal>;
      const projectId = principal.projectId as string;
      const wanted = (request.query as Record<string, unknown>).flagConfigEtag;
      if (typeof wanted === "string" && VERSION.test(wanted)) {
        const version = Number(wanted);
        if (version > (snapshot.versions.get(projectId) ?? 0)) {
          return streaming.awaitVersion(projectId, version).then(() => answerBulk(request, reply, principal.keyId));
        }
      }
      return answerBulk(request, reply, principal.keyId);
    },
  );

  /** The bulk answer's ETag for the environment's state now. */
  function tagOf(request: FastifyRequest, keyId: string) {
    const principal = request.principal as NonNullable<typeof request.principal>;
    const projectId = principal.projectId as string;
    const { state, environment } = snapshot.environmentState(projectId, principal.environment);
    // Rules on $now change answers with time alone: the tag moves as the clock crosses one of their instants.
    const passed = boundariesPassed(state, streaming.now());
    const body = request.body as OfrepBody;
    const tag = bulkTag(projectId, environment, keyId, tokens.window(), state.evaluationVersion, body, passed);
    return { state, environment, tag };
  }

  function answerBulk(request: FastifyRequest, reply: FastifyReply, keyId: string) {
    const { tag } = tagOf(request, keyId);
    if (matches(request.headers["if-none-match"], tag)) return reply.header("etag", tag).code(304).send(null);
    // Answered in turn with the other bulk answers, a few milliseconds of the event loop at a time: 50
    // browsers refetching at once after a change would otherwise hold the checks behind all of them. The
    // state is read when its turn comes, so the answer and its ETag are of one version.
    bulkTurns.add([reply], () => {
      if (reply.sent || request.raw.socket?.destroyed !== false) return;
      try {
        const { state, environment, tag } = tagOf(request, keyId);
        reply.header("etag", tag);
        const target = targetOf(request.body as OfrepBody);
        const token = tokens.issue(keyId);
        const rest =
          token === undefined
            ? undefined
            : { eventStreams: [{ type: "sse", endpoint: { requestUri: `${EVENT_STREAM_PATH}?token=${token}` } }] };
        // Written as JSON here (BulkAnswers): what answers every context alike is encoded once per version,
        // and its parts are sent as they are, the shared ones included.
        const { parts, length } = bulk.body(state, environment, target.actors, target.attributes, rest);
        reply.type(JSON_TYPE).header("content-length", length).send(Readable.from(parts));
      } catch (error) {
        // The project or the environment went meanwhile: the route's errors answer it.
        reply.send(error);
      }
    });
    return reply;
  }

  app.get(
    EVENT_STREAM_PATH,
    {
      // The URL carries a token: requests to it are not logged one by one (ADR-0008: never log it).
      config: { access: "evaluate", streamToken: true, requestLogging: false },
      exposeHeadRoute: false,
      schema: {
        tags: ["openfeature"],
        summary: "OFREP: hear when to refetch the bulk evaluation, as server-sent events (extension)",
        description:
          "The event stream the bulk evaluation advertises in `eventStreams` (OFREP ADR-0008). text/event-stream: " +
          '`event: message`, `data: {"type":"refetchEvaluation","etag":"<version>"}`, `id` the project ' +
          "version; sent on connecting (unless Last-Event-ID shows nothing was missed) and after each change " +
          "that may change an answer; a comment every 15 s. It carries no flag value. Authenticate with the " +
          "`token` the bulk evaluation gives (browsers' EventSource cannot send headers; valid 15 to 30 " +
          "minutes, dies with its key), or with the key as Bearer or X-API-Key. It ends when the key is " +
          "revoked, the project deleted or the server stops. Refused with 429 (this key holds " +
          "OFREP_STREAM_MAX_PER_KEY event streams here) or 503 (this instance holds STREAM_MAX_PER_INSTANCE " +
          "streams), with Retry-After.",
        security: [{ bearer: [] }, { streamToken: [] }],
        querystring: Type.Object(
          { token: Type.Optional(Type.String({ maxLength: 256, description: "A stream token from eventStreams" })) },
          { additionalProperties: false },
        ),
        headers: LastEventIdHeaders,
        response: {
          200: EventStreamAnswer,
          ...errorResponses(400, 401, 403, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const principal = request.principal as NonNullable<typeof request.principal>;
      const projectId = principal.projectId as string;
      admitStream(streams, "refetch", principal.keyId, reply);
      streams.openRefetch(
        openEventStream(reply),
        projectId,
        principal.environment,
        principal,
        lastEventId(request.headers["last-event-id"]),
      );
    },
  );

  app.get(
    "/ofrep/v1/configuration",
    {
      config: { access: "evaluate" },
      schema: {
        tags: ["openfeature"],
        summary: "OFREP: what this service supports (extension)",
        querystring: AnyQuery,
        response: { 200: OfrepConfiguration, ...errorResponses(400, 401, 403, 429, 500) },
      },
    },
    async () => ({
      name: "flagstaff",
      capabilities: {
        cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: 1000 } },
        flagEvaluation: { supportedTypes: ["boolean", "string", "number", "object"] },
      },
    }),
  );
}
