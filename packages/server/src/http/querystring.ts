import fastQuerystring from "fast-querystring";

/**
 * Parses a query string, reading `name[]=a&name[]=b` as `name=a&name=b`, so clients that bracket
 * repeated parameters (PHP, Rails, qs) and clients that repeat them plainly are understood alike.
 */
export function parseQueryString(text: string): Record<string, unknown> {
  const parsed = fastQuerystring.parse(text) as Record<string, string | string[]>;
  const out: Record<string, unknown> = {};
  for (const [rawName, value] of Object.entries(parsed)) {
    const name = rawName.endsWith("[]") ? rawName.slice(0, -2) : rawName;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = ([] as string[]).concat(existing as string | string[], value);
  }
  return out;
}
