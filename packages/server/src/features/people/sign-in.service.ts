import type { User } from "@flagstaff/core/schemas";
import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
import type { Database } from "../../db/schema.js";
import { AppError } from "../../errors.js";
import { hashToken, newSecretToken } from "../../ids.js";
import { decoyHash, verifyPassword } from "./passwords.js";
import * as repo from "./people.repository.js";

/** Failures in a row after which an account is locked, and the lock's first and longest duration. */
export const LOCK_AFTER_FAILURES = 5;
const FIRST_LOCK_MS = 60_000;
const LONGEST_LOCK_MS = 15 * 60_000;
/** Failures one address may make across accounts in a window, before it is refused for the rest of it. */
export const ADDRESS_FAILURES = 20;
const ADDRESS_WINDOW_MS = 15 * 60_000;
/** How long a one-time sign-in link is good for. */
export const LINK_TTL_MS = 24 * 60 * 60_000;

const invalidCredentials = () =>
  new AppError(401, "invalid_credentials", "The e-mail or the password is wrong, or the account cannot sign in.");

export class TooManyAttempts extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, "too_many_attempts", `Too many failed sign-ins: try again in ${retryAfterSeconds} s.`);
  }
}

/**
 * Sign-in by password and by one-time link. Every refusal of a password is the same 401, whatever the
 * reason, and takes a password hash's time, so neither the answer nor its timing tells which e-mails
 * exist. Guessing is slowed per account (in the database, so every instance counts together) and per
 * address (in memory, per instance).
 */
export class SignInService {
  /** address → failures in the current window and when it started. */
  private readonly addressFailures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async withPassword(email: string, password: string, address: string): Promise<User> {
    const now = this.clock.now();
    this.refuseBusyAddress(address, now);
    const user = await repo.findUserByEmail(this.db, email);
    if (user?.lockedUntil && Date.parse(user.lockedUntil) > now) {
      throw new TooManyAttempts(Math.ceil((Date.parse(user.lockedUntil) - now) / 1000));
    }
    const matches = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
    if (!user || !matches || user.passwordHash === null || user.disabled) {
      this.countAddressFailure(address, now);
      if (user && !user.disabled && user.passwordHash !== null) {
        const failures = user.failedSignIns + 1;
        const lockMs =
          failures >= LOCK_AFTER_FAILURES
            ? Math.min(LONGEST_LOCK_MS, FIRST_LOCK_MS * 2 ** (failures - LOCK_AFTER_FAILURES))
            : 0;
        await repo.updateUser(this.db, user.id, {
          failedSignIns: failures,
          lockedUntil: lockMs > 0 ? isoTime(now + lockMs) : null,
        });
      }
      throw invalidCredentials();
    }
    await repo.updateUser(this.db, user.id, { failedSignIns: 0, lockedUntil: null, lastSignInAt: isoTime(now) });
    return { ...repo.publicUser(user), lastSignInAt: isoTime(now) };
  }

  private refuseBusyAddress(address: string, now: number): void {
    const entry = this.addressFailures.get(address);
    if (!entry) return;
    if (now - entry.since >= ADDRESS_WINDOW_MS) {
      this.addressFailures.delete(address);
      return;
    }
    if (entry.count >= ADDRESS_FAILURES) {
      throw new TooManyAttempts(Math.ceil((entry.since + ADDRESS_WINDOW_MS - now) / 1000));
    }
  }

  private countAddressFailure(address: string, now: number): void {
    const entry = this.addressFailures.get(address);
    if (entry && now - entry.since < ADDRESS_WINDOW_MS) entry.count++;
    else this.addressFailures.set(address, { count: 1, since: now });
    // Bounded: windows that ended are dropped when the map grows large (a scan of many addresses).
    if (this.addressFailures.size > 10_000) {
      for (const [key, value] of this.addressFailures)
        if (now - value.since >= ADDRESS_WINDOW_MS) this.addressFailures.delete(key);
    }
  }

  /** Makes a one-time sign-in link's token for a person; good for LINK_TTL_MS, used once. */
  async createLink(userId: string): Promise<string> {
    const token = newSecretToken();
    await this.db
      .insertInto("sign_in_tokens")
      .values({
        id_hash: hashToken(token),
        kind: "link",
        user_id: userId,
        data: null,
        expires_at: isoTime(this.clock.now() + LINK_TTL_MS),
      })
      .execute();
    return token;
  }

  /** Uses a sign-in link's token (deleting it, so a second use fails); answers its person, or undefined. */
  async withLink(token: string): Promise<User | undefined> {
    const hash = hashToken(token);
    const row = await this.db
      .deleteFrom("sign_in_tokens")
      .where("id_hash", "=", hash)
      .where("kind", "=", "link")
      .returning(["user_id", "expires_at"])
      .executeTakeFirst();
    const now = this.clock.now();
    if (!row || row.user_id === null || Date.parse(row.expires_at) <= now) return undefined;
    const user = await repo.findUser(this.db, row.user_id);
    if (!user || user.disabled) return undefined;
    await repo.updateUser(this.db, user.id, { lastSignInAt: isoTime(now) });
    return { ...repo.publicUser(user), lastSignInAt: isoTime(now) };
  }
}
