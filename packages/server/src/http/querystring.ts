import { readQueryAttributeParameter } from "@flagstaff/core";
import type { preValidationHookHandler } from "fastify";
import fastQuerystring from "fast-querystring";
import { invalid } from "../kernel/errors.js";

/**
 * The attributes a query names both as a value (`attributes[x]=…`) and as a list's elements
 * (`attributes[x][]=…`): kept beside the parsed query (a symbol, so the schema never sees it) for
 * `refuseMixedAttributes` to refuse.
 */
const MIXED_ATTRIBUTES = Symbol("mixed attribute spellings");

/**
 * Parses a query string, reading `name[]=a&name[]=b` as `name=a&name=b`, so clients that bracket
 * repeated parameters (PHP, Rails, qs) and clients that repeat them plainly are understood alike.
 * Attributes follow the grammar of @flagstaff/core (contract/query-attributes.ts) and are gathered into
 * `attributes` (an object without a prototype, so a name such as `__proto__` is only a name):
 * `attributes[NAME]=value` is a value, a name repeated a list, and every `attributes[NAME][]=value` an
 * element of the list NAME (so one alone is a list of one).
 */
export function parseQueryString(text: string): Record<string, unknown> {
  const parsed = fastQuerystring.parse(text) as Record<string, string | string[]>;
  const out: Record<string | symbol, unknown> = {};
  // Which spelling gave each attribute (true: the list's), to tell a name written both ways.
  let spellings: Record<string, boolean> | undefined;
  for (const [rawName, value] of Object.entries(parsed)) {
    const attribute = readQueryAttributeParameter(rawName);
    if (attribute !== undefined) {
      out.attributes ??= Object.create(null);
      const attributes = out.attributes as Record<string, string | string[]>;
      // `attributes=…` written plainly as well: left as it is, for the schema to refuse.
      if (typeof attributes !== "object" || Array.isArray(attributes)) continue;
      const { name, list } = attribute;
      spellings ??= Object.create(null) as Record<string, boolean>;
      const given = list && typeof value === "string" ? [value] : value;
      // fast-querystring gathers each spelling's values under one key, so a name meets itself again only
      // in the other spelling.
      if (spellings[name] !== undefined) {
        out[MIXED_ATTRIBUTES] = [...((out[MIXED_ATTRIBUTES] as string[] | undefined) ?? []), name];
        continue;
      }
      spellings[name] = list;
      attributes[name] = given;
      continue;
    }
    const name = rawName.endsWith("[]") ? rawName.slice(0, -2) : rawName;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = ([] as string[]).concat(existing as string | string[], value);
  }
  return out;
}

/** A JSON Pointer's reference token (RFC 6901). */
const pointerToken = (name: string) => name.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * The check's and explain's preValidation hook: a query that writes one attribute both as a value
 * (`attributes[x]=a`) and as a list's elements (`attributes[x][]=b`) is refused (400), since it says two
 * things of one attribute.
 */
export const refuseMixedAttributes: preValidationHookHandler = (request, _reply, done) => {
  const mixed = (request.query as Record<symbol, unknown> | undefined)?.[MIXED_ATTRIBUTES] as string[] | undefined;
  if (mixed === undefined) return done();
  const errors = mixed.map((name) => ({
    path: `/query/attributes/${pointerToken(name)}`,
    message: `must be written one way: attributes[${name}]=… (a value, repeated for a list) or attributes[${name}][]=… (a list's elements), not both`,
  }));
  const first = errors[0] as { path: string; message: string };
  done(invalid(`The query string is invalid: ${first.path} ${first.message}.`, errors));
};
