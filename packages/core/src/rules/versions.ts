import { compareSemver, parseSemver, type SemVer } from "./semver.js";
import { toText } from "./values.js";

// Versions as the semver conditions compare them: parsed once, with their numbers kept as numbers (and as
// one key when they fit) so that most comparisons read no strings.

/**
 * A version as conditions compare it: the parsed SemVer, with its three numbers as numbers when each has
 * at most 15 digits (exact as doubles), on which most comparisons are decided without reading strings.
 */
export class Version {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** All three numbers are exact. */
  readonly small: boolean;
  /** No prerelease. */
  readonly release: boolean;
  /**
   * The three numbers as one, major·2³² + minor·2¹⁶ + patch, when major < 2²¹ and minor, patch < 2¹⁶ (so
   * exact, and ordered as the three); -1 otherwise.
   */
  readonly key: number;

  constructor(readonly semver: SemVer) {
    this.small = semver.major.length <= 15 && semver.minor.length <= 15 && semver.patch.length <= 15;
    this.major = this.small ? Number(semver.major) : 0;
    this.minor = this.small ? Number(semver.minor) : 0;
    this.patch = this.small ? Number(semver.patch) : 0;
    this.release = semver.prerelease.length === 0;
    this.key =
      this.small && this.major < 2 ** 21 && this.minor < 2 ** 16 && this.patch < 2 ** 16
        ? this.major * 2 ** 32 + this.minor * 2 ** 16 + this.patch
        : -1;
  }
}

export const toVersion = (semver: SemVer): Version => new Version(semver);

/** compareSemver's order (negative, zero or positive), by the numbers when they decide it. */
export function compareVersions(a: Version, b: Version): number {
  const ak = a.key;
  const bk = b.key;
  if (ak >= 0 && bk >= 0) {
    if (ak !== bk) return ak < bk ? -1 : 1;
    if (a.release && b.release) return 0;
  } else if (a.small && b.small) {
    if (a.major !== b.major) return a.major < b.major ? -1 : 1;
    if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
    if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1;
    if (a.release && b.release) return 0;
  }
  return compareSemver(a.semver, b.semver);
}

// The last version read, kept: the semver conditions of one evaluation (and of the next, for the same
// context) mostly read the same attribute, and parsing it is most of their cost.
let lastVersionText: string | undefined;
let lastVersion: Version | null = null;
export function readVersion(value: unknown): Version | null {
  const text = toText(value);
  if (text === undefined) return null;
  if (text !== lastVersionText) {
    const parsed = parseSemver(text);
    lastVersion = parsed === null ? null : new Version(parsed);
    lastVersionText = text;
  }
  return lastVersion;
}
