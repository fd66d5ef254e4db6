import { createHash, randomBytes } from "node:crypto";
import { monotonicFactory } from "ulid";

/** A server-generated opaque id such as `seg_Vb1k3xQ9mZ0aP2cR`; the prefix tells the kind at a glance. */
export function newId(prefix: "flg" | "seg"): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}

// The one ULID factory: every time-ordered id is minted here. Shared by every instance in the process on
// purpose: ids only need to be unique and to increase, so ids made in the same millisecond still sort in
// the order they were made.
const nextUlid = monotonicFactory();

/** A key id such as `key_01JD3…`: keys list in creation order with the id as the tie-breaker. */
export function newKeyId(now: number): string {
  return `key_${nextUlid(now)}`;
}

/** An event id such as `evt_01JD3…`: the history pages by it, newest first. A ping's id is one too. */
export function newEventId(now: number): string {
  return `evt_${nextUlid(now)}`;
}

/** A webhook id such as `wh_01JD3…`. */
export function newWebhookId(now: number): string {
  return `wh_${nextUlid(now)}`;
}

/** A webhook delivery id such as `dlv_01JD3…`: a webhook's deliveries list and are claimed in this order. */
export function newDeliveryId(now: number): string {
  return `dlv_${nextUlid(now)}`;
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

/** A person's id such as `usr_01JD3…`: people list in the order they were added. */
export function newUserId(now: number): string {
  return `usr_${nextUlid(now)}`;
}

/** A random secret of 256 bits for a session cookie or a one-time token; stored only as its SHA-256. */
export function newSecretToken(): string {
  return randomBytes(32).toString("base64url");
}

/** SHA-256 of a session id or one-time token, hex (the same digest as keys). */
export const hashToken = hashApiKey;

/** A change request's id such as `cr_01JD3…`: requests list newest first by it. */
export function newChangeRequestId(now: number): string {
  return `cr_${nextUlid(now)}`;
}
