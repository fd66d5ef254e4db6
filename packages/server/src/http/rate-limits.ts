import rateLimit, { type RateLimitOptions } from "@fastify/rate-limit";
import type { FastifyRequest } from "fastify";
import type { Config } from "../kernel/config.js";
import { AppError } from "../kernel/errors.js";
import type { TypedApp } from "./typed-app.js";

const MINUTE = 60_000;

const tooMany = (_request: FastifyRequest, context: { max: number; after: string }) =>
  new AppError(429, "rate_limited", `Over ${context.max} requests per minute; retry in ${context.after}.`);

/** A request made with a project's `check` key: the key meant for web pages, so public. */
const withCheckKey = (request: FastifyRequest) => request.principal?.role === "check";

/**
 * The rate limits (@fastify/rate-limit). Counted after authentication (the preHandler hook), so made-up
 * Authorization headers cannot buy fresh budgets:
 * - RATE_LIMIT_PER_MINUTE, off by default: every request, per key (per client address without one);
 * - OFREP_BULK_RATE_LIMIT_PER_MINUTE, on by default: OFREP bulk evaluations made with a check key, per key
 *   and client address (bulkEvaluationRateLimit). A check key sits in every page of a site, so anyone
 *   can use it; a bulk evaluation answers every flag of the project (840 KiB at 10,000 flags), so one
 *   client must not be able to ask for them without end. A per-key limit would let one client lock out
 *   every page: the budget is each client address's.
 */
export async function registerRateLimits(app: TypedApp, config: Config): Promise<void> {
  await app.register(rateLimit, {
    global: config.rateLimitPerMinute > 0,
    max: config.rateLimitPerMinute,
    timeWindow: MINUTE,
    hook: "preHandler",
    keyGenerator: (request) => request.principal?.keyId ?? request.ip,
    allowList: (request) => request.routeOptions.config.access === "public",
    errorResponseBuilder: tooMany,
  });
}

/**
 * The OFREP bulk evaluation's limit: OFREP_BULK_RATE_LIMIT_PER_MINUTE per check key and client address
 * (`request.ip`: behind a proxy, set TRUST_PROXY so it is the client's); other keys keep
 * RATE_LIMIT_PER_MINUTE per key. Either at 0 is off.
 */
export function bulkEvaluationRateLimit(config: Config): RateLimitOptions {
  const limitOf = (request: FastifyRequest) =>
    withCheckKey(request) ? config.ofrepBulkRateLimitPerMinute : config.rateLimitPerMinute;
  return {
    max: limitOf,
    timeWindow: MINUTE,
    hook: "preHandler",
    keyGenerator: (request) =>
      withCheckKey(request) ? `${request.principal?.keyId} ${request.ip}` : (request.principal?.keyId ?? request.ip),
    allowList: (request) => limitOf(request) === 0,
    errorResponseBuilder: tooMany,
  };
}
