import type { FastifyRequest } from "fastify";
import { AppError } from "../kernel/errors.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a request that changes something unless it comes from the server's own pages (OWASP's CSRF
 * cheat sheet: Fetch Metadata first, `Origin` where a browser sends no Fetch Metadata). A browser sends the
 * session cookie along whichever site makes the request; these two headers are ones a page cannot forge.
 * A request with neither header (not a browser's) is refused too: a cookie alone proves nothing.
 */
export function refuseCrossSite(request: FastifyRequest, ownOrigin: string): void {
  if (SAFE_METHODS.has(request.method)) return;
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined) {
    if (site === "same-origin" || site === "none") return;
    throw crossSite(`Sec-Fetch-Site is ${String(site)}`);
  }
  const origin = request.headers.origin;
  if (origin === undefined) throw crossSite("the request sends neither Sec-Fetch-Site nor Origin");
  if (origin !== ownOrigin) throw crossSite(`Origin ${origin} is not ${ownOrigin}`);
}

const crossSite = (why: string) =>
  new AppError(
    403,
    "cross_site_request",
    `A change made with the session cookie must come from the console's own pages (${why}). Programs use an API key.`,
  );

/** The server's own origin: PUBLIC_URL's, or the one the request was addressed to. */
export function ownOriginOf(publicUrl: string | undefined): (request: FastifyRequest) => string {
  if (publicUrl !== undefined) {
    const origin = new URL(publicUrl).origin;
    return () => origin;
  }
  return (request) => `${request.protocol}://${request.host}`;
}
