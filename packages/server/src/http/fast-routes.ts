// The routes with two doors, Fastify's route (http/routes/) and the node:http adapter's fast path
// (node-adapter.ts): their paths, under which both record metrics, and the content type both answer with.

/** The check's route. */
export const CHECK_ROUTE = "/projects/:projectId/flags/:flagName/check";

/** OFREP's single evaluation's route. */
export const OFREP_EVALUATE_ROUTE = "/ofrep/v1/evaluate/flags/:key";

export const JSON_TYPE = "application/json; charset=utf-8";
