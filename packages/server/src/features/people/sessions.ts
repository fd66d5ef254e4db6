import { parseCookie, type SetCookie, stringifySetCookie } from "cookie";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
import type { Database } from "../../db/schema.js";
import type { SessionVerifier } from "../../http/auth.js";
import { hashToken, newSecretToken } from "../../ids.js";
import type { Principal } from "../evaluation/snapshot.js";
import type { PeopleState } from "./people-state.js";
import { FAILURES_FORGOTTEN_AFTER_MS } from "./sign-in.service.js";

// The cookie codec (RFC 6265) that Fastify's cookie plugin wraps, used directly: registering the plugin
// would add a hook to every request, the check's included (and its own codec works only once registered).
const parse = (header: string) => parseCookie(header);
const serialize = (name: string, value: string, options: Omit<SetCookie, "name" | "value">) =>
  stringifySetCookie({ name, value, ...options });

export interface SessionOptions {
  /** A session unused this long ends. */
  readonly idleMs: number;
  /** A session ends this long after sign-in, used or not. */
  readonly maxMs: number;
  /** PUBLIC_URL is https: the cookie is Secure and carries the __Host- prefix (no Domain, Path=/). */
  readonly secure: boolean;
}

/** How often a session's last use is written: often enough for the idle timeout, rarely enough to cost little. */
const TOUCH_EVERY_MS = 60_000;

/**
 * Server-side sessions (OWASP's session management cheat sheet): the cookie holds a random 256-bit id, the
 * database only its SHA-256; every sign-in makes a new one, so an id planted before sign-in is worth
 * nothing (no fixation); a session ends when idle too long, when too old, at sign-out, and when its person
 * is disabled or deleted (the snapshot says so on every instance, the rows go too).
 */
export class Sessions implements SessionVerifier {
  readonly cookieName: string;

  constructor(
    private readonly database: Kysely<Database>,
    private readonly clock: Clock,
    private readonly people: PeopleState,
    private readonly options: SessionOptions,
  ) {
    this.cookieName = options.secure ? "__Host-flagstaff_session" : "flagstaff_session";
  }

  presented(request: FastifyRequest): string | undefined {
    const header = request.headers.cookie;
    if (header === undefined || !header.includes(this.cookieName)) return undefined;
    const value = parse(header)[this.cookieName];
    return value === undefined || value === "" ? undefined : value;
  }

  /** Starts a session for a person and sets its cookie on the reply. */
  async start(reply: FastifyReply, userId: string): Promise<void> {
    const id = newSecretToken();
    const now = this.clock.now();
    await this.database
      .insertInto("sessions")
      .values({
        id_hash: hashToken(id),
        user_id: userId,
        created_at: isoTime(now),
        last_seen_at: isoTime(now),
        expires_at: isoTime(now + this.options.maxMs),
      })
      .execute();
    reply.header(
      "set-cookie",
      serialize(this.cookieName, id, {
        httpOnly: true,
        sameSite: "lax",
        secure: this.options.secure,
        path: "/",
        maxAge: Math.floor(this.options.maxMs / 1000),
      }),
    );
  }

  /** Tells the browser to forget the cookie. */
  clear(reply: FastifyReply): void {
    reply.header(
      "set-cookie",
      serialize(this.cookieName, "", {
        httpOnly: true,
        sameSite: "lax",
        secure: this.options.secure,
        path: "/",
        maxAge: 0,
      }),
    );
  }

  async principalOf(sessionId: string): Promise<Principal | undefined> {
    const hash = hashToken(sessionId);
    const row = await this.database
      .selectFrom("sessions")
      .select(["user_id", "last_seen_at", "expires_at"])
      .where("id_hash", "=", hash)
      .executeTakeFirst();
    if (!row) return undefined;
    const now = this.clock.now();
    const lastSeen = Date.parse(row.last_seen_at);
    if (now >= Date.parse(row.expires_at) || now - lastSeen >= this.options.idleMs) {
      await this.end(sessionId);
      return undefined;
    }
    const person = this.people.person(row.user_id);
    if (!person || person.disabled) return undefined;
    if (now - lastSeen >= TOUCH_EVERY_MS) {
      await this.database
        .updateTable("sessions")
        .set({ last_seen_at: isoTime(now) })
        .where("id_hash", "=", hash)
        .execute();
    }
    return {
      keyId: `ses_${hash.slice(0, 24)}`,
      keyName: person.name,
      role: "admin",
      projectId: null,
      environment: null,
      userId: person.id,
      via: "session",
    };
  }

  async end(sessionId: string): Promise<void> {
    await this.database.deleteFrom("sessions").where("id_hash", "=", hashToken(sessionId)).execute();
  }

  /** Ends every session of a person (in `db`, a write's transaction, when given). */
  async endAll(userId: string, db: Kysely<Database> | Transaction<Database> = this.database): Promise<void> {
    await db.deleteFrom("sessions").where("user_id", "=", userId).execute();
  }
}

/**
 * Deletes what can no longer sign anyone in: sessions past their absolute end or idle since `idleBefore`,
 * one-time links and single sign-on attempts past theirs, and failed sign-ins of e-mails with no attempt
 * for FAILURES_FORGOTTEN_AFTER_MS (an unauthenticated visitor makes the latter two, so they must not pile
 * up; a lock never lasts that long).
 */
export async function pruneSignIns(db: Kysely<Database>, now: string, idleBefore: string): Promise<void> {
  await db
    .deleteFrom("sessions")
    .where((eb) => eb.or([eb("expires_at", "<=", now), eb("last_seen_at", "<=", idleBefore)]))
    .execute();
  await db.deleteFrom("sign_in_tokens").where("expires_at", "<=", now).execute();
  const quietSince = isoTime(Date.parse(now) - FAILURES_FORGOTTEN_AFTER_MS);
  await db
    .deleteFrom("sign_in_failures")
    .where("last_attempt_at", "<=", quietSince)
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<=", now)]))
    .execute();
}
