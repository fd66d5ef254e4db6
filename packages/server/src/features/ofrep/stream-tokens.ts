import { createHmac, timingSafeEqual } from "node:crypto";
import type { Clock } from "../../kernel/clock.js";
import type { Snapshot } from "../evaluation/snapshot.js";
import type { Principal } from "../../access/principal.js";

/** A stream token is issued per window of this length and stays valid until the end of the next one. */
export const STREAM_TOKEN_WINDOW_MS = 15 * 60_000;

/**
 * The furthest ahead a token's expiry may lie: the longest life the server issues (two windows) plus five
 * minutes for instances whose clocks disagree. Whoever holds a key can compute its hash, and so a token
 * with any expiry it likes (one in 2100 would outlive every rotation of the key's URLs): the server, not
 * the token, bounds how long one lasts.
 */
export const STREAM_TOKEN_MAX_LIFETIME_MS = 2 * STREAM_TOKEN_WINDOW_MS + 5 * 60_000;

const TOKEN = /^([0-9A-Za-z_-]{1,80})\.(\d{1,12})\.([0-9A-Za-z_-]{43})$/;

/**
 * Short-lived tokens for the OFREP event stream (`GET /ofrep/v1/event-stream?token=…`).
 *
 * A browser's `EventSource` cannot send headers, and the OFREP web provider opens the URL the bulk
 * evaluation advertises as it is, so the credential has to be in the URL. URLs end up in proxy and
 * server logs, browser history and the provider's local storage: an API key there would stay usable for
 * everything it allows until revoked. A stream token instead opens the event stream only (which carries
 * no flag value, only "something changed"), of one key's project, for 15 to 30 minutes, and dies with
 * the key.
 *
 * `<keyId>.<expiry in seconds>.<HMAC-SHA256 of both, keyed by the key's hash>`: every instance holds the
 * hashes of valid keys in its snapshot, so any instance can check a token another one issued, nothing is
 * stored, and a revoked key's tokens fail at once. The hash never leaves the server, so a token cannot be
 * forged without the database.
 */
export class StreamTokens {
  constructor(
    private readonly snapshot: Snapshot,
    private readonly clock: Clock,
  ) {}

  /** The window the clock is in; it is part of the bulk answer's ETag, so the advertised token is renewed. */
  window(): number {
    return Math.floor(this.clock.now() / STREAM_TOKEN_WINDOW_MS);
  }

  /** A token for the key, valid until the end of the next window; undefined if the key is not (or no longer) valid. */
  issue(keyId: string): string | undefined {
    const key = this.snapshot.keyById(keyId);
    if (!key) return undefined;
    const expires = ((this.window() + 2) * STREAM_TOKEN_WINDOW_MS) / 1000;
    return `${keyId}.${expires}.${mac(key.hash, keyId, expires)}`;
  }

  /**
   * The principal of a token that is well-formed, unexpired, not set to expire further ahead than the
   * server ever issues, and whose key is still valid; otherwise undefined.
   */
  verify(token: string): Principal | undefined {
    const match = TOKEN.exec(token);
    if (!match) return undefined;
    const keyId = match[1] as string;
    const expires = Number(match[2]) * 1000;
    const now = this.clock.now();
    if (expires <= now || expires > now + STREAM_TOKEN_MAX_LIFETIME_MS) return undefined;
    const key = this.snapshot.keyById(keyId);
    if (!key) return undefined;
    const expected = Buffer.from(mac(key.hash, keyId, expires / 1000));
    const given = Buffer.from(match[3] as string);
    return expected.length === given.length && timingSafeEqual(expected, given) ? key.principal : undefined;
  }
}

function mac(keyHash: string, keyId: string, expires: number): string {
  return createHmac("sha256", keyHash).update(`flagstaff ofrep event stream\0${keyId}\0${expires}`).digest("base64url");
}
