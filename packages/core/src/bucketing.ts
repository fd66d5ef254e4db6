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

/** Whether an actor falls inside a flag's actor rollout of `percentage` percent. */
export function inActorRollout(flagName: string, actorId: string, percentage: number): boolean {
  if (percentage <= 0) return false;
  if (percentage >= 100) return true;
  return actorBucket(flagName, actorId) < percentage * 1000;
}

/** Whether a call falls inside a call rollout of `percentage` percent, given a uniform draw in [0, 1). */
export function inCallRollout(percentage: number, draw: number): boolean {
  return draw < percentage / 100;
}
