// How a condition reads an attribute's value for each kind of operator. Written out rather than left to
// Number() and Date.parse, whose leniencies (Number("") is 0, Number(" 0x10 ") is 16, Date.parse takes
// implementation-defined formats) another language's SDK could not reproduce.

/** JSON's number syntax: what a numeric string must look like to be read as a number. */
const NUMERIC_TEXT = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/**
 * An attribute as a number for eq/gt/gte/lt/lte: a finite number, or a string in JSON's number syntax
 * whose value is finite ("30", "-1.5e3"; not "", " 30", "0x1E", "Infinity"). NaN otherwise.
 */
export function toNumber(value: unknown): number {
  if (typeof value === "number") return Number.isFinite(value) ? value : Number.NaN;
  if (typeof value === "string" && NUMERIC_TEXT.test(value)) {
    const n = Number(value);
    return Number.isFinite(n) ? n : Number.NaN;
  }
  return Number.NaN;
}

/**
 * An attribute as text for the string operators and semver: a string as it is, a finite number as
 * JavaScript (and JSON) writes it ("30", "1.5"), a boolean as "true"/"false". Undefined otherwise. So
 * `plan=30` from a query string and `{"plan": 30}` from OFREP read alike.
 */
export function toText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === "boolean") return value ? "true" : "false";
  return undefined;
}

// RFC 3339's date-time (an ISO 8601 profile), seconds optional: a date, "T", a time, then "Z" or an offset.
const INSTANT =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const year = m <= 2 ? y - 1 : y;
  const era = Math.floor(year / 400);
  const yoe = year - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * An ISO 8601 instant (RFC 3339: `2026-12-01T09:00:00Z`, `2026-12-01T10:00+01:00`, fractions of a second
 * to nanoseconds, read to the millisecond) as milliseconds since the epoch; NaN when it is not one (a date
 * without a time or zone, a 13th month, a 31st of April, a leap second).
 */
export function parseInstant(text: string): number {
  const m = INSTANT.exec(text);
  if (m === null) return Number.NaN;
  const [y, mo, d, h, mi] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const s = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, "0").slice(0, 3));
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59) return Number.NaN;
  const monthDays = mo === 2 && isLeap(y) ? 29 : (DAYS_IN_MONTH[mo - 1] as number);
  if (d < 1 || d > monthDays) return Number.NaN;
  let offset = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return Number.NaN;
    offset = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  return ((daysFromCivil(y, mo, d) * 24 + h) * 60 + mi - offset) * 60_000 + s * 1000 + ms;
}

/** An attribute as an instant for before/after: an ISO 8601 instant string, or a finite number of milliseconds since the epoch. */
export function toInstant(value: unknown): number {
  if (typeof value === "number") return Number.isFinite(value) ? value : Number.NaN;
  if (typeof value === "string") return parseInstant(value);
  return Number.NaN;
}
