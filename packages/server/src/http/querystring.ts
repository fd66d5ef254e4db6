import fastQuerystring from "fast-querystring";

/** `attributes[NAME]`, optionally followed by `[]`: a context attribute of the check. */
const ATTRIBUTE = /^attributes\[([^\]]+)\](?:\[\])?$/;

/**
 * Parses a query string, reading `name[]=a&name[]=b` as `name=a&name=b`, so clients that bracket
 * repeated parameters (PHP, Rails, qs) and clients that repeat them plainly are understood alike.
 * `attributes[NAME]=value` is gathered into `attributes` (an object without a prototype, so a name such
 * as `__proto__` is only a name); a name repeated is a list.
 */
export function parseQueryString(text: string): Record<string, unknown> {
  const parsed = fastQuerystring.parse(text) as Record<string, string | string[]>;
  const out: Record<string, unknown> = {};
  for (const [rawName, value] of Object.entries(parsed)) {
    const attribute = ATTRIBUTE.exec(rawName);
    if (attribute !== null) {
      out.attributes ??= Object.create(null);
      const attributes = out.attributes as Record<string, string | string[]>;
      // `attributes=…` written plainly as well: left as it is, for the schema to refuse.
      if (typeof attributes !== "object" || Array.isArray(attributes)) continue;
      const key = attribute[1] as string;
      const existing = attributes[key];
      attributes[key] = existing === undefined ? value : ([] as string[]).concat(existing, value);
      continue;
    }
    const name = rawName.endsWith("[]") ? rawName.slice(0, -2) : rawName;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = ([] as string[]).concat(existing as string | string[], value);
  }
  return out;
}
