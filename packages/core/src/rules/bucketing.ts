import CRC32 from "crc-32";

/** Number of buckets an actor can fall into; a percentage p covers buckets [0, p * 1000). */
export const BUCKET_COUNT = 100_000;

const encoder = new TextEncoder();
// Reused so the hot path does not allocate a fresh byte array per actor.
const scratch = new Uint8Array(4096);

/** CRC-32 (as in zlib) of the UTF-8 bytes of `text`, as an unsigned 32-bit integer. */
export function crc32Utf8(text: string): number {
  // TextEncoder replaces lone surrogates with U+FFFD, exactly as zlib callers encoding UTF-8 do;
  // crc-32's own string helper encodes them differently, so it is not used.
  if (text.length * 3 <= scratch.length) {
    const { written } = encoder.encodeInto(text, scratch);
    return CRC32.buf(scratch.subarray(0, written)) >>> 0;
  }
  return CRC32.buf(encoder.encode(text)) >>> 0;
}

/** The bucket, 0 to 99,999, that an actor falls into for a flag; stable across calls and instances. */
export function actorBucket(flagName: string, actorId: string): number {
  return crc32Utf8(`${flagName}:${actorId}`) % BUCKET_COUNT;
}

/** What the actor rollout reads of a flag: its name, its percentage, and its bucket cache if it has one. */
export interface RolloutFlag {
  readonly name: string;
  readonly percentageActors: number;
  /** The actor's bucket for this flag from a cache (`ProjectState` keeps one): the same number as `actorBucket`. */
  readonly bucketOf?: (actorId: string) => number;
}

/** The actor's bucket for a flag: `actorBucket`, through the flag's bucket cache when it has one. */
export function flagBucket(flag: RolloutFlag, actorId: string): number {
  return flag.bucketOf ? flag.bucketOf(actorId) : actorBucket(flag.name, actorId);
}

/**
 * Whether an actor falls inside a flag's actor rollout: its bucket is below percentageActors × 1,000 (none
 * at 0 %, all at 100 %, the bucket not even computed then). The one definition of the actor rollout:
 * `evaluateFlag` and `inActorRollout` ask it.
 */
export function inFlagRollout(flag: RolloutFlag, actorId: string): boolean {
  const percentage = flag.percentageActors;
  if (percentage <= 0) return false;
  if (percentage >= 100) return true;
  return flagBucket(flag, actorId) < percentage * 1000;
}

/** The actor rollout's threshold, percentage × 1,000 within 0 and 100,000: buckets below it are in it. */
export function rolloutThreshold(percentage: number): number {
  return Math.max(0, Math.min(100, percentage)) * 1000;
}

/** Whether an actor falls inside a flag's actor rollout of `percentage` percent (`inFlagRollout`). */
export function inActorRollout(flagName: string, actorId: string, percentage: number): boolean {
  return inFlagRollout({ name: flagName, percentageActors: percentage }, actorId);
}

/** Whether a call falls inside a call rollout of `percentage` percent, given a uniform draw in [0, 1). */
export function inCallRollout(percentage: number, draw: number): boolean {
  return draw < percentage / 100;
}
