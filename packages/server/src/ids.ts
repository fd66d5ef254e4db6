import { createHash, randomBytes } from "node:crypto";
import { monotonicFactory } from "ulid";

/** A server-generated opaque id such as `seg_Vb1k3xQ9mZ0aP2cR`; the prefix tells the kind at a glance. */
export function newId(prefix: "flg" | "seg"): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

// Shared by every instance in the process on purpose: ids only need to be unique and to increase.
const nextUlid = monotonicFactory();

/**
 * A key id such as `key_01JD3…`: a ULID, so ids made in the same millisecond still sort in the order
 * they were made, and keys list in creation order with the id as the tie-breaker.
 */
export function newKeyId(now: number): string {
  return `key_${nextUlid(now)}`;
}

/** Recognisable prefix of every API key, so secret scanners and people can spot one. */
export const API_KEY_PREFIX = "fsk_";

/** A new API key secret: the prefix and 32 random bytes (256 bits). */
export function newApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** SHA-256 of a key, hex; the only form in which keys are stored. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}
