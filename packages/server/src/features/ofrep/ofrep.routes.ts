import { createHash } from "node:crypto";
import type { Evaluation } from "@flagstaff/core";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";

import { errorHandler, toAppError } from "../../http/problem.js";
import { errorResponses } from "../../http/schemas.js";
import type { TypedApp } from "../../http/typed-app.js";
import type { Checker } from "../evaluation/checker.js";
import type { Metrics } from "../metrics/metrics.js";
import {
  OfrepBulk,
  OfrepBulkFailure,
  OfrepConfiguration,
  OfrepEvaluation,
  OfrepFailure,
  OfrepRequest,
} from "./ofrep.schemas.js";

interface OfrepBody {
  context?: { targetingKey?: string; actorIds?: string[] };
}

/** The actors a context names: its targeting key first, then any extra `actorIds`. */
function actorsOf(body: OfrepBody | undefined): string[] {
  const context = body?.context;
  if (!context) return [];
  const actors = context.actorIds ? [...context.actorIds] : [];
  if (context.targetingKey !== undefined) actors.unshift(context.targetingKey);
  return actors;
}

const success = (key: string, evaluation: Evaluation) => ({
  key,
  value: evaluation.enabled,
  reason: evaluation.reason,
  variant: evaluation.enabled ? ("on" as const) : ("off" as const),
  metadata: {},
});

/**
 * An ETag for a bulk answer: a digest of the project, the version of its evaluation state and the
 * context, so it changes when any flag's answer may change or the context does, and two projects never
 * share one (a key of one project presenting another's tag gets the full answer, never a 304).
 */
function bulkTag(projectId: string, version: number, body: OfrepBody | undefined): string {
  const digest = createHash("sha256")
    .update(JSON.stringify([projectId, version, body?.context ?? {}]))
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
function ofrepErrors(single: boolean) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    const key = (request.params as { key?: string } | undefined)?.key ?? "";
    if (appError.status === 400) {
      const errorCode = /not valid JSON/.test(appError.detail) ? "PARSE_ERROR" : "INVALID_CONTEXT";
      const body = { errorCode, errorDetails: appError.detail };
      return reply.code(400).send(single ? { key, ...body } : body);
    }
    if (appError.code === "flag_not_found") {
      return reply.code(404).send({ key, errorCode: "FLAG_NOT_FOUND", errorDetails: appError.detail });
    }
    if (appError.status >= 500 && appError.status !== 503) {
      request.log.error({ err: error }, "request failed");
      return reply.code(500).send({ errorDetails: "Something went wrong on our side; it has been logged." });
    }
    return errorHandler(error, request, reply);
  };
}

export function ofrepRoutes(app: TypedApp, checker: Checker, metrics: Metrics): void {
  for (const schema of [OfrepEvaluation, OfrepFailure, OfrepBulk, OfrepBulkFailure]) app.addSchema(schema);

  app.post(
    "/ofrep/v1/evaluate/flags/:key",
    {
      config: { access: "evaluate" },
      errorHandler: ofrepErrors(true),
      schema: {
        tags: ["openfeature"],
        summary: "OFREP: evaluate one flag (extension)",
        description:
          "OpenFeature Remote Evaluation Protocol. The API key (any role, sent as Bearer or X-API-Key) names the " +
          "project. context.targetingKey is the actor; context.actorIds adds more.",
        params: Type.Object({ key: Type.String() }),
        querystring: AnyQuery,
        body: OfrepRequest,
        response: {
          200: Type.Ref("OfrepEvaluation"),
          400: Type.Ref("OfrepFailure"),
          404: Type.Ref("OfrepFailure"),
          500: Type.Object({ errorDetails: Type.String() }),
          ...errorResponses(401, 403, 413, 415, 429),
        },
      },
    },
    (request, reply) => {
      const projectId = request.principal?.projectId as string;
      const key = request.params.key;
      const evaluation = checker.check(projectId, key, actorsOf(request.body as OfrepBody));
      metrics.recordCheck(evaluation.enabled);
      return reply.send(success(key, evaluation));
    },
  );

  app.post(
    "/ofrep/v1/evaluate/flags",
    {
      config: { access: "evaluate" },
      errorHandler: ofrepErrors(false),
      schema: {
        tags: ["openfeature"],
        summary: "OFREP: evaluate every flag of the key's project (extension)",
        description:
          "Answers with an ETag; a request whose If-None-Match names it gets 304 until a flag of the project " +
          "or the context changes.",
        headers: Type.Object({ "if-none-match": Type.Optional(Type.String()) }),
        querystring: AnyQuery,
        body: OfrepRequest,
        response: {
          200: Type.Ref("OfrepBulk"),
          304: Type.Null({ description: "Not modified" }),
          400: Type.Ref("OfrepBulkFailure"),
          500: Type.Object({ errorDetails: Type.String() }),
          ...errorResponses(401, 403, 413, 415, 429),
        },
      },
    },
    (request, reply) => {
      const projectId = request.principal?.projectId as string;
      const body = request.body as OfrepBody;
      const tag = bulkTag(projectId, checker.evaluationVersionOf(projectId) ?? 0, body);
      reply.header("etag", tag);
      if (matches(request.headers["if-none-match"], tag)) return reply.code(304).send(null);
      const flags = checker.checkAll(projectId, actorsOf(body)).map(({ name, evaluation }) => {
        metrics.recordCheck(evaluation.enabled);
        return success(name, evaluation);
      });
      return reply.send({ flags });
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
        flagEvaluation: { supportedTypes: ["boolean"] },
      },
    }),
  );
}
