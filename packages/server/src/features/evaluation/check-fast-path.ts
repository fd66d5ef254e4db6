import type { IncomingMessage, ServerResponse } from "node:http";
import { MAX_ACTORS, MAX_CACHE_SECONDS } from "@flagstaff/core";
import type { Credentials } from "../../http/auth.js";
import type { Metrics } from "../metrics/metrics.js";
import { CHECK_ROUTE, cacheControl, DISABLED, ENABLED } from "./check.routes.js";
import type { Checker } from "./checker.js";
import { FastPath, type FastPathOptions, isPlainActorId } from "./fast-path.js";

/**
 * The check's path as the fast path takes it: names spelled without percent-encoding, no trailing
 * slash. The character classes are the widest the project id and flag name rules allow; any other
 * spelling (one that needs decoding, say) goes to Fastify, whose router matches it to the same route.
 */
const CHECK_PATH = /^\/projects\/([A-Za-z0-9._-]{1,64})\/flags\/([A-Za-z0-9._:-]{1,128})\/check(?:\?|$)/;
/** `cache` as the fast path reads it: whole seconds, plainly written. */
const PLAIN_SECONDS = /^[0-9]{1,5}$/;

const ENABLED_BODY = JSON.stringify(ENABLED);
const DISABLED_BODY = JSON.stringify(DISABLED);

/** The check's query as the fast path read it; undefined when it is not one the fast path reads. */
interface PlainQuery {
  actorIds: string[] | undefined;
  cache: number | undefined;
}

/**
 * Reads `actorIds=a&actorIds[]=b&cache=60` when every part is plainly written and valid; otherwise
 * undefined, and Fastify reads the query (decoding, coercion, the 400 for what is wrong). What it
 * accepts is a strict subset of what the route's query schema accepts, read to the same values.
 */
function readPlainQuery(text: string): PlainQuery | undefined {
  const query: PlainQuery = { actorIds: undefined, cache: undefined };
  if (text === "") return query;
  // Fastify's parser groups `actorIds` and `actorIds[]` apart; a query that mixes them is left to it.
  let spelling: string | undefined;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf("&", start);
    if (end === -1) end = text.length;
    const eq = text.indexOf("=", start);
    if (eq === -1 || eq > end) return undefined;
    const name = text.slice(start, eq);
    const value = text.slice(eq + 1, end);
    if (name === "actorIds" || name === "actorIds[]") {
      spelling ??= name;
      if (spelling !== name) return undefined;
      if (!isPlainActorId(value)) return undefined;
      query.actorIds ??= [];
      if (query.actorIds.push(value) > MAX_ACTORS) return undefined;
    } else if (name === "cache" && query.cache === undefined && PLAIN_SECONDS.test(value)) {
      query.cache = Number(value);
      if (query.cache > MAX_CACHE_SECONDS) return undefined;
    } else {
      return undefined;
    }
    start = end + 1;
  }
  return query;
}

/**
 * Answers the check in front of Fastify, on node:http alone, when the answer is a 200: the same key
 * lookup, the same evaluation, the same headers and the same metrics as the Fastify route, without its
 * per-request lifecycle (request and reply objects, hooks, validator, serializer), which costs more than
 * the check itself (docs/performance.md).
 *
 * It never answers anything else. A request it is not sure of (a path or query that needs decoding, a
 * method other than GET, no key or a key that may not check, an unknown project or flag, a query the
 * route would refuse or one written in a way it does not read, an Origin header under CORS, a closing
 * server) returns false and Fastify handles it from the start, so every error keeps its one home and its
 * exact problem details. Nothing happens before it decides, beyond noting the check time that the
 * Fastify route would note as well.
 */
export class CheckFastPath extends FastPath {
  constructor(checker: Checker, metrics: Metrics, credentials: Credentials, options: FastPathOptions) {
    super(checker, metrics, credentials, options, "GET", CHECK_ROUTE);
  }

  /** Answers the request and returns true, or returns false having written nothing. */
  serve(request: IncomingMessage, response: ServerResponse): boolean {
    if (!this.open || request.method !== "GET") return false;
    const url = request.url as string;
    const match = CHECK_PATH.exec(url);
    if (match === null) return false;
    const started = performance.now();
    const headers = request.headers;
    const projectId = match[1] as string;
    if (this.principalAllowed(headers, "check", projectId) === undefined) return false;
    const query = readPlainQuery(url.slice(match[0].length));
    if (query === undefined) return false;
    let enabled: boolean;
    try {
      enabled = this.checker.check(projectId, match[2] as string, query.actorIds).enabled;
    } catch {
      return false; // an unknown project or flag: Fastify answers the 404
    }
    this.metrics.recordCheck(enabled);
    this.answer(response, headers, cacheControl(query.cache), enabled ? ENABLED_BODY : DISABLED_BODY, started);
    return true;
  }
}
