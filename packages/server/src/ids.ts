import { createHash, randomBytes } from "node:crypto";

/** A server-generated opaque id such as `seg_Vb1k3xQ9mZ0aP2cR`; the prefix tells the kind at a glance. */
export function newId(prefix: "flg" | "seg" | "key"): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
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
