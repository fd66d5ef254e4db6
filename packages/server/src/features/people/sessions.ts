import { parseCookie, type SetCookie, stringifySetCookie } from "cookie";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { hashToken, newSecretToken } from "../../kernel/ids.js";
import { EventBus } from "../../write-path/event-bus.js";
import type { WriteHooks } from "../../write-path/unit-of-work.js";
import type { EndedSessions, Principal } from "../../access/principal.js";
import type { UserRole } from "@flagstaff/core";
import type { PeopleState } from "../../access/people-state.js";
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
  /** Where a failing listener of `ended` is logged. */
  readonly logger?: { warn(obj: object, msg: string): void };
}

/** How often a session's last use is written: often enough for the idle timeout, rarely enough to cost little. */
const TOUCH_EVERY_MS = 60_000;

/** A session's row, as far as whether it still lives goes. */
type SessionTimes = { readonly last_seen_at: string; readonly expires_at: string };

/** Finds the person signed in by a request's session cookie; what authentication (http/auth.ts) asks of Sessions. */
export interface SessionVerifier {
  /** The session's id in the request's cookie, or undefined when it sends none. */
  presented(request: FastifyRequest): string | undefined;
  principalOf(sessionId: string): Promise<Principal | undefined>;
}

/**
 * Server-side sessions (OWASP's session management cheat sheet): the cookie holds a random 256-bit id, the
 * database only its SHA-256; every sign-in makes a new one, so an id planted before sign-in is worth
 * nothing (no fixation); a session ends when idle too long, when too old, at sign-out, and when its person
 * is disabled or deleted (the snapshot says so on every instance, the rows go too).
 */
export class Sessions implements SessionVerifier {
  readonly cookieName: string;
  /**
   * Published when sessions end here (sign-out, sign-out everywhere, a new password, disabling, expiry
   * noticed at a request), after the ending is committed: the streams they opened end with them at once.
   * Sessions ended elsewhere (another instance, pruning, time) are found by `live`, which the streams ask.
   */
  readonly ended = new EventBus<EndedSessions>();

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
    await this.knowPerson(userId);
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
    if (this.expired(row, now)) {
      await this.end(sessionId);
      return undefined;
    }
    const person = this.people.person(row.user_id);
    if (!person || person.disabled) return undefined;
    if (now - Date.parse(row.last_seen_at) >= TOUCH_EVERY_MS) {
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
      session: hash,
    };
  }

  /**
   * Which of these sessions (hashes of their ids) still live, by the rules `principalOf` applies: the row
   * is there, neither idle for too long nor past its absolute end, and its person is there and not
   * disabled. One query; it reads, and never counts as a use (`last_seen_at` stays as it is).
   */
  async live(hashes: readonly string[]): Promise<Set<string>> {
    const live = new Set<string>();
    if (hashes.length === 0) return live;
    const rows = await this.database
      .selectFrom("sessions")
      .select(["id_hash", "user_id", "last_seen_at", "expires_at"])
      .where("id_hash", "in", hashes)
      .execute();
    const now = this.clock.now();
    for (const row of rows) {
      const person = this.people.person(row.user_id);
      if (!this.expired(row, now) && person && !person.disabled) live.add(row.id_hash);
    }
    return live;
  }

  /**
   * Puts a person who signs in here into this instance's state when the change feed has not brought them
   * yet: one added by another process (`admin-key user create`) or instance moments ago, whose link is used
   * at once, would otherwise be signed in and then answered as signed out until the next poll (up to
   * FEED_POLL_INTERVAL_MS on SQLite). The feed's own change for them follows and says the same.
   */
  private async knowPerson(userId: string): Promise<void> {
    if (this.people.person(userId) !== undefined) return;
    const user = await this.database
      .selectFrom("users")
      .select(["id", "email", "name", "role", "disabled"])
      .where("id", "=", userId)
      .executeTakeFirst();
    if (!user) return;
    this.people.putPerson({
      id: user.id,
      email: user.email,
      name: user.name,
      role: user.role as UserRole,
      disabled: Number(user.disabled) === 1,
    });
  }

  async end(sessionId: string): Promise<void> {
    const session = hashToken(sessionId);
    await this.database.deleteFrom("sessions").where("id_hash", "=", session).execute();
    await this.tell({ session });
  }

  /**
   * Ends every session of a person. Within a write (its transaction and hooks), the streams hear of it
   * once the write has committed: a write that rolls back ends nothing.
   */
  async endAll(userId: string, within?: { trx: Transaction<Database>; hooks: WriteHooks }): Promise<void> {
    await (within?.trx ?? this.database).deleteFrom("sessions").where("user_id", "=", userId).execute();
    if (within) within.hooks.afterCommit(() => void this.tell({ userId }));
    else await this.tell({ userId });
  }

  /**
   * Ends every session of a person but one (hash of its id, as `Principal.session` holds it): a new
   * password set in a session signs out every other browser and keeps this one. Within a write, the
   * streams of the ended sessions hear of it once the write has committed.
   */
  async endOthers(
    userId: string,
    keep: string,
    within: { trx: Transaction<Database>; hooks: WriteHooks },
  ): Promise<void> {
    const ended = await within.trx
      .deleteFrom("sessions")
      .where("user_id", "=", userId)
      .where("id_hash", "!=", keep)
      .returning("id_hash")
      .execute();
    within.hooks.afterCommit(() => {
      for (const { id_hash } of ended) void this.tell({ session: id_hash });
    });
  }

  /** Tells the listeners; one that fails is logged, and the sessions stay ended (the streams' check follows). */
  private async tell(ended: EndedSessions): Promise<void> {
    try {
      await this.ended.publish(ended);
    } catch (error) {
      this.options.logger?.warn({ err: error }, "a listener failed on ended sessions");
    }
  }

  /** Whether a session is over by time: unused for the idle timeout, or past its absolute end. */
  private expired(row: SessionTimes, now: number): boolean {
    return now >= Date.parse(row.expires_at) || now - Date.parse(row.last_seen_at) >= this.options.idleMs;
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
