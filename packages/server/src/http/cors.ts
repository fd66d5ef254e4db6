import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";

/** What a page may send: the key (either way the API takes it), JSON bodies, conditional requests. */
const ALLOWED_HEADERS = [
  "Authorization",
  "Content-Type",
  "If-None-Match",
  "If-Match",
  // EventSource sends it when it reconnects to an event stream.
  "Last-Event-ID",
  "X-API-Key",
  "X-Request-Id",
];
/**
 * What a page may read beyond the basics. ETag above all: without it the OFREP web provider can never
 * send If-None-Match, so it never gets a 304 and reports a configuration change on every poll.
 */
const EXPOSED_HEADERS = ["ETag", "Location", "Retry-After", "WWW-Authenticate", "X-Request-Id"];
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
/**
 * Browsers cache a preflight for 5 s by default, so a poller would repeat it every few polls. Removing an
 * origin still takes effect at once: browsers check every real answer too.
 */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Lets pages on the given origins call the API from a browser. With no origins nothing is registered,
 * so CORS off costs requests nothing. Must be registered before authentication: a preflight carries no
 * key, and it is answered (204) in this plugin's onRequest hook, before any other hook sees it. Headers
 * set there stay on error answers too, so a page can read a 401 or a 404.
 */
export async function registerCors(app: FastifyInstance, allowedOrigins: readonly string[]): Promise<void> {
  if (allowedOrigins.length === 0) return;
  await app.register(cors, {
    // A list is matched exactly against Origin, answered with Vary: Origin, and an origin that is not
    // in it gets no Access-Control-Allow-Origin at all (its preflight is an empty 204 that grants nothing).
    origin: allowedOrigins[0] === "*" ? "*" : [...allowedOrigins],
    methods: METHODS,
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    // Otherwise an OPTIONS without Origin gets a text/plain 400, the one answer that is not problem details.
    strictPreflight: false,
  });
}

/**
 * The headers @fastify/cors (as registered above) adds to an answer to a request that sends no Origin,
 * for the check's fast path, which answers such requests without running the plugin. A list of origins
 * varies by Origin; `*` allows every origin. Exposed headers are listed either way. The fast path's
 * differential test compares both paths' headers, so a change in the plugin shows there.
 */
export function corsHeadersWithoutOrigin(allowedOrigins: readonly string[]): Record<string, string> {
  if (allowedOrigins.length === 0) return {};
  const exposed = { "access-control-expose-headers": EXPOSED_HEADERS.join(", ") };
  return allowedOrigins[0] === "*"
    ? { "access-control-allow-origin": "*", ...exposed }
    : { vary: "Origin", ...exposed };
}
