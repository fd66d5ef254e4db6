// Semantic versions for the semver_* operators: SemVer 2.0 precedence, read leniently the way flagd's and
// LaunchDarkly's users write versions. Written here rather than taken from `semver` (npm): that package is
// CommonJS only, reads "1" and "1.2" only through `coerce` (which drops the prerelease unless asked, and
// pulls a version out of any text: "foo1.2bar" is 1.2.0), and is far larger than these 60 lines.
//
// Accepted: an optional leading "v" or "V"; MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH, a missing part read
// as 0; leading zeros in those three (CalVer's "2024.01.15" is 2024.1.15); then SemVer 2.0's prerelease
// and build exactly (a numeric prerelease identifier has no leading zero). Nothing else: no spaces.

/** A parsed version. Numbers are kept as digit strings without leading zeros, so no size overflows. */
export interface SemVer {
  readonly major: string;
  readonly minor: string;
  readonly patch: string;
  /** Prerelease identifiers; empty for a release. */
  readonly prerelease: readonly string[];
}

const IDENT = "(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)";
const SEMVER = new RegExp(
  `^[vV]?([0-9]+)(?:\\.([0-9]+)(?:\\.([0-9]+))?)?(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`,
);
const NUMERIC = /^[0-9]+$/;

const number = (digits: string | undefined): string => {
  if (digits === undefined) return "0";
  let start = 0;
  while (start < digits.length - 1 && digits.charCodeAt(start) === 48) start++;
  return digits.slice(start);
};

/** The version `text` names, or null when it is not one. */
export function parseSemver(text: string): SemVer | null {
  const m = SEMVER.exec(text);
  if (m === null) return null;
  return {
    major: number(m[1]),
    minor: number(m[2]),
    patch: number(m[3]),
    prerelease: m[4] === undefined ? [] : m[4].split("."),
  };
}

/** Compares digit strings without leading zeros as the numbers they write. */
const compareDigits = (a: string, b: string): number =>
  a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;

/** SemVer 2.0 §11: identifiers compare numerically when both are numeric, numeric before alphanumeric, else in ASCII order. */
function compareIdentifiers(a: string, b: string): number {
  const aNumeric = NUMERIC.test(a);
  const bNumeric = NUMERIC.test(b);
  if (aNumeric && bNumeric) return compareDigits(a, b);
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative, zero or positive as `a` has lower, equal or higher precedence than `b` (build metadata ignored). */
export function compareSemver(a: SemVer, b: SemVer): number {
  const core = compareDigits(a.major, b.major) || compareDigits(a.minor, b.minor) || compareDigits(a.patch, b.patch);
  if (core !== 0) return Math.sign(core);
  // A release has higher precedence than any of its prereleases.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return Math.sign(b.prerelease.length - a.prerelease.length);
  }
  const n = Math.min(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < n; i++) {
    const c = compareIdentifiers(a.prerelease[i] as string, b.prerelease[i] as string);
    if (c !== 0) return Math.sign(c);
  }
  // A longer list of identifiers has higher precedence when all before are equal.
  return Math.sign(a.prerelease.length - b.prerelease.length);
}
