import {
  ACTOR_ID_MAX_LENGTH,
  ATTRIBUTE_NAME_MAX_LENGTH,
  FLAG_NAME_CHARACTERS,
  FLAG_NAME_MAX_LENGTH,
  MAX_ACTORS,
  MAX_CACHE_SECONDS,
  MAX_QUERY_ATTRIBUTE_VALUES,
  MAX_QUERY_ATTRIBUTES,
  PROJECT_ID_CHARACTERS,
  PROJECT_ID_MAX_LENGTH,
} from "@flagstaff/core";

/**
 * Actor ids the node:http adapter reads itself: characters that mean themselves in a query string (no
 * `%`, no `+`, which reads as a space, no `&`, `=` or `#`), within the actor id rules. Others go to Fastify.
 */
const PLAIN_ACTOR_ID = new RegExp(`^[A-Za-z0-9._~:@!$*,()/-]{1,${ACTOR_ID_MAX_LENGTH}}$`);

/** Whether an actor id is one the node:http adapter reads itself (see PLAIN_ACTOR_ID; `.` and `..` are not ids). */
export const isPlainActorId = (id: unknown): id is string =>
  typeof id === "string" && PLAIN_ACTOR_ID.test(id) && id !== "." && id !== "..";

/**
 * The check's path as the adapter takes it: names spelled without percent-encoding, no trailing slash.
 * The character classes and lengths are the contract's for project ids and flag names (ids.ts), without
 * their first-character and `.`/`..` rules: a name that breaks those names no project or flag, and the
 * adapter leaves an unknown one to Fastify. Any other spelling (one that needs decoding, say) goes to
 * Fastify too, whose router matches it to the same route.
 */
const CHECK_PATH = new RegExp(
  `^/projects/([${PROJECT_ID_CHARACTERS}]{1,${PROJECT_ID_MAX_LENGTH}})` +
    `/flags/([${FLAG_NAME_CHARACTERS}]{1,${FLAG_NAME_MAX_LENGTH}})/check(?:\\?|$)`,
);
/**
 * An attribute's parameter and value as the adapter reads them, plain characters only: the contract's
 * grammar (`attributes[NAME]=value`, `attributes[NAME][]=value` for a list's element; @flagstaff/core,
 * contract/query-attributes.ts) on a subset of names and values that need no decoding.
 */
const PLAIN_ATTRIBUTE = new RegExp(
  `^attributes\\[([A-Za-z0-9._~:@!$*,()/-]{1,${ATTRIBUTE_NAME_MAX_LENGTH}})\\](\\[\\])?$`,
);
const PLAIN_ATTRIBUTE_VALUE = /^[A-Za-z0-9._~:@!$*,()/-]{1,256}$/;

/** `cache` as the adapter reads it: whole seconds, plainly written. */
const PLAIN_SECONDS = /^[0-9]{1,5}$/;

/** A check request as the adapter read it: what the route would read from its params and query. */
export interface PlainCheck {
  projectId: string;
  flagName: string;
  actorIds: string[] | undefined;
  cache: number | undefined;
  /**
   * `attributes[NAME]=value`, a name repeated is a list, and `attributes[NAME][]=value` an element of the
   * list NAME (as the route's query parser reads them).
   */
  attributes: Record<string, string | string[]> | undefined;
}

/**
 * Reads a check's URL (`/projects/p/flags/f/check?actorIds=a&actorIds[]=b&cache=60`) when the path and
 * every part of the query are plainly written and valid; otherwise undefined, and Fastify reads it
 * (decoding, coercion, the 400 for what is wrong). What it accepts is a strict subset of what the route's
 * params and query schema accept, read to the same values.
 */
export function readPlainCheck(url: string): PlainCheck | undefined {
  const match = CHECK_PATH.exec(url);
  if (match === null) return undefined;
  const read: PlainCheck = {
    projectId: match[1] as string,
    flagName: match[2] as string,
    actorIds: undefined,
    cache: undefined,
    attributes: undefined,
  };
  let attributeCount = 0;
  // Which spelling gave each attribute (true: `[]`, a list's); a name written both ways is Fastify's 400.
  let listed: Record<string, boolean> | undefined;
  const text = url.slice(match[0].length);
  if (text === "") return read;
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
      read.actorIds ??= [];
      if (read.actorIds.push(value) > MAX_ACTORS) return undefined;
    } else if (name.startsWith("attributes")) {
      // URLSearchParams (so most clients) percent-encodes the brackets: %5B and %5D mean themselves here.
      const attribute = PLAIN_ATTRIBUTE.exec(name.replace(/%5B/gi, "[").replace(/%5D/gi, "]"));
      if (attribute === null || !PLAIN_ATTRIBUTE_VALUE.test(value)) return undefined;
      const key = attribute[1] as string;
      const list = attribute[2] !== undefined;
      read.attributes ??= Object.create(null) as Record<string, string | string[]>;
      listed ??= Object.create(null) as Record<string, boolean>;
      const existing = read.attributes[key];
      if (existing === undefined) {
        if (++attributeCount > MAX_QUERY_ATTRIBUTES) return undefined;
        read.attributes[key] = list ? [value] : value;
        listed[key] = list;
      } else if (listed[key] !== list) {
        return undefined;
      } else if (typeof existing === "string") {
        read.attributes[key] = [existing, value];
      } else if (existing.push(value) > MAX_QUERY_ATTRIBUTE_VALUES) {
        return undefined;
      }
    } else if (name === "cache" && read.cache === undefined && PLAIN_SECONDS.test(value)) {
      read.cache = Number(value);
      if (read.cache > MAX_CACHE_SECONDS) return undefined;
    } else {
      return undefined;
    }
    start = end + 1;
  }
  return read;
}
