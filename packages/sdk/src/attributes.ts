// Context attributes as a check's or an explanation's query carries them, in the contract's grammar
// (@flagstaff/core, query-attributes.ts).
import { queryAttributeParameter } from "@flagstaff/core";
import { FlagstaffError } from "./errors.js";
import type { QueryValue } from "./http.js";
import type { CheckAttributes } from "./types.js";

/**
 * An attribute as the query carries it: a value as text, or a list of texts (an empty list carries
 * nothing, so the server reads it as a missing attribute).
 */
export type QueryAttribute = readonly [name: string, value: string | readonly string[]];

/** The attributes given, as [name, value] pairs, values as text, lists kept lists; null and undefined ones left out. */
export function attributeEntries(attributes: CheckAttributes | undefined): QueryAttribute[] {
  if (attributes === undefined || attributes === null) return [];
  if (typeof attributes !== "object" || Array.isArray(attributes)) {
    throw new FlagstaffError({
      status: 0,
      code: "invalid_argument",
      detail: "attributes must be an object of attribute names to values.",
    });
  }
  const out: QueryAttribute[] = [];
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) out.push([name, value.map(String)]);
    else if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      out.push([name, String(value)]);
    } else {
      throw new FlagstaffError({
        status: 0,
        code: "invalid_argument",
        detail: `Attribute ${JSON.stringify(name)} must be a string, a number, a boolean or a list of strings.`,
      });
    }
  }
  return out;
}

/**
 * Attributes as query parameters, in the contract's grammar (@flagstaff/core, query-attributes.ts):
 * `attributes[NAME]=value` for a value, `attributes[NAME][]=element` for each element of a list, so a
 * list of one stays a list.
 */
export function attributeQuery(entries: readonly QueryAttribute[]): Record<string, QueryValue> {
  const query: Record<string, QueryValue> = {};
  for (const [name, value] of entries) query[queryAttributeParameter(name, typeof value !== "string")] = value;
  return query;
}
