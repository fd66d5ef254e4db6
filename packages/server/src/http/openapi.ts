import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";

/** Generates the OpenAPI 3.1 document from the routes' own TypeBox schemas; nothing is written by hand. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Flagstaff feature-flag API",
        version,
        description:
          "Feature flags with actor and segment targeting and percentage rollouts. Version 1, served at the root. " +
          "Operations marked (extension) go beyond the original interface. Errors are RFC 9457 problem details.",
      },
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "An API key: fsk_…" },
          streamToken: {
            type: "apiKey",
            in: "query",
            name: "token",
            description:
              "A short-lived OFREP event-stream token, taken from the bulk evaluation's eventStreams (browsers' " +
              "EventSource cannot send headers). Opens that stream only.",
          },
        },
      },
      security: [{ bearer: [] }],
      tags: [
        { name: "flags" },
        { name: "evaluation" },
        { name: "segments" },
        { name: "actors" },
        { name: "projects", description: "Extension" },
        { name: "keys", description: "Extension" },
        { name: "openfeature", description: "Extension: OpenFeature Remote Evaluation Protocol (OFREP) v1" },
        { name: "history", description: "Extension: who changed what, when" },
        { name: "webhooks", description: "Extension: Standard Webhooks deliveries of the history's events" },
        { name: "operations" },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (document) =>
      withDeepObjectAttributes(("openapiObject" in document ? document.openapiObject : {}) as OpenApiDocument) as never,
  });
}

type OpenApiDocument = {
  paths?: Record<string, Record<string, { parameters?: { in: string; name: string; [key: string]: unknown }[] }>>;
};

/**
 * The check's and explain's `attributes` are written `attributes[NAME]=value`: OpenAPI's deepObject style,
 * which @fastify/swagger cannot set on one parameter of a querystring schema, so it is set here. Clients
 * generated from the document (and the reference's Try it out) then spell them as the server reads them.
 */
function withDeepObjectAttributes(document: OpenApiDocument): OpenApiDocument {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === "query" && parameter.name === "attributes") {
          parameter.style = "deepObject";
          parameter.explode = true;
        }
      }
    }
  }
  return document;
}

/** Serves the interactive API reference (Swagger UI, from npm, no CDN) at /docs, rendered from the same document. */
export async function registerApiReference(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    // BaseLayout: the reference without Swagger UI's top bar. That bar renders Swagger's logo as an inline SVG
    // carrying a <style> element, which the policy below (style-src without 'unsafe-inline') blocks, so every
    // load logged a CSP error before @fastify/swagger-ui swapped the logo for an image. The bar holds nothing
    // else this page needs (one document, no URL to explore); Authorize and the operations are in the base.
    uiConfig: { docExpansion: "list", deepLinking: true, persistAuthorization: true, layout: "BaseLayout" },
    staticCSP: true,
    // The stock policy ends in upgrade-insecure-requests, which sends every asset to https: opened over
    // plain HTTP on any host but localhost (which browsers never upgrade), /docs stayed blank. Only that
    // directive goes; the rest of the policy stays as strict.
    transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/, ""),
  });
}
