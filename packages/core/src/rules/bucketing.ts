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

/** Buckets remembered per flag; past this the cache starts over (actors seen recently come back fast). */
const BUCKET_CACHE_SIZE = 8192;

/** What the actor rollout reads of a flag: its name, its percentage, and its bucket cache if it has one. */
export interface RolloutFlag {
  readonly name: string;
  readonly percentageActors: number;
  /** The actor's bucket for this flag from a cache of the caller's: the same number as `actorBucket`. */
  readonly bucketOf?: (actorId: string) => number;
  /**
   * A flag of a ProjectState caches its buckets here (null: none yet; undefined: it does not cache): a
   * Map lookup instead of a CRC-32 for actors seen before. Made at the flag's first actor rollout, since
   * most flags never have one (a Map for each of 50,000 flags held 12 MiB), on a property the flag has
   * from the start, so every flag keeps one shape. (A closure that assigned its captured cache once put
   * the check's process in a slow state: see docs/performance.md, "Environments".)
   */
  bucketCache?: Map<string, number> | null;
}

/** The actor's bucket for a flag: `actorBucket`, through the flag's bucket cache when it has one. */
export function flagBucket(flag: RolloutFlag, actorId: string): number {
  if (flag.bucketOf) return flag.bucketOf(actorId);
  let cache = flag.bucketCache;
  if (cache === undefined) return actorBucket(flag.name, actorId);
  if (cache === null) {
    cache = new Map();
    flag.bucketCache = cache;
  }
  let bucket = cache.get(actorId);
  if (bucket === undefined) {
    bucket = actorBucket(flag.name, actorId);
    if (cache.size >= BUCKET_CACHE_SIZE) cache.clear();
    cache.set(actorId, bucket);
  }
  return bucket;
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
