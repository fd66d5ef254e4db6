import type { User } from "@flagstaff/core/schemas";
import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { AppError } from "../../kernel/errors.js";
import { hashToken, newSecretToken } from "../../kernel/ids.js";
import { decoyHash, verifyPassword } from "./passwords.js";
import * as repo from "./people.repository.js";
import type { LockStep } from "./people.repository.js";

/** Failures in a row after which an e-mail is locked, and the lock's first and longest duration. */
export const LOCK_AFTER_FAILURES = 5;
const FIRST_LOCK_MS = 60_000;
const LONGEST_LOCK_MS = 15 * 60_000;
/** An e-mail's failures are forgotten after this long without an attempt (pruneSignIns). */
export const FAILURES_FORGOTTEN_AFTER_MS = 24 * 60 * 60_000;
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
 * The locks an e-mail's count leads to, from `now`: after LOCK_AFTER_FAILURES failures in a row one of
 * FIRST_LOCK_MS, doubling with each further failure, at most LONGEST_LOCK_MS.
 */
function lockSteps(now: number): LockStep[] {
  const steps: LockStep[] = [];
  for (let failures = LOCK_AFTER_FAILURES, ms = FIRST_LOCK_MS; ; failures++, ms *= 2) {
    steps.unshift({ atLeast: failures, until: isoTime(now + Math.min(ms, LONGEST_LOCK_MS)) });
    if (ms >= LONGEST_LOCK_MS) return steps;
  }
}

/**
 * Sign-in by password and by one-time link. Every refusal of a password is the same 401, whatever the
 * reason, and takes a password hash's time; every lockout is the same 429 and takes none, for an e-mail
 * that exists or not; so neither the answers nor their timing tell which e-mails exist.
 *
 * Guessing is slowed per e-mail (in the database, so every instance counts together) and per address (in
 * memory, per instance). Both count an attempt before its password is hashed, and give it back when it
 * succeeds, so attempts made in parallel cannot all pass the limits: the e-mail's count is one upsert
 * (repo.countSignInAttempt), the address's is taken synchronously, before the first await.
 */
export class SignInService {
  private readonly addresses = new AddressAttempts();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async withPassword(email: string, password: string, address: string): Promise<User> {
    const user = await this.attempt(email, password, address);
    const now = isoTime(this.clock.now());
    await repo.updateUser(this.db, user.id, { lastSignInAt: now });
    return { ...repo.publicUser(user), lastSignInAt: now };
  }

  /**
   * Checks a signed-in person's password before they change it (`PUT /users/me/password`), as a sign-in
   * checks it: counted against the e-mail's and the address's limits, so a stolen session cannot be used to
   * guess the password; a wrong one is the same 401, a lockout the same 429. Answers the hash it matched.
   */
  async checkCurrent(userId: string, email: string, password: string, address: string): Promise<string> {
    const wrong = () => new AppError(401, "invalid_credentials", "The current password is wrong.");
    let user: repo.UserRow;
    try {
      user = await this.attempt(email, password, address);
    } catch (error) {
      throw error instanceof AppError && error.code === "invalid_credentials" ? wrong() : error;
    }
    // The e-mail is the person's own (from their session): it names no one else.
    if (user.id !== userId || user.passwordHash === null) throw wrong();
    return user.passwordHash;
  }

  /**
   * One password attempt for an e-mail: counted, checked, and on success forgotten. Answers the person;
   * throws 429 while locked, 401 for anything wrong.
   */
  private async attempt(email: string, password: string, address: string): Promise<repo.UserRow> {
    const now = this.clock.now();
    // Synchronous: no other attempt runs between this address's check and its count.
    const giveBack = this.addresses.take(address, now);
    let checked = false;
    try {
      const key = repo.emailKey(email);
      const count = await repo.countSignInAttempt(this.db, key, isoTime(now), lockSteps(now));
      if (count === undefined) {
        const until = await repo.signInLockEnd(this.db, key);
        const left = until ? Date.parse(until) - now : 0;
        throw new TooManyAttempts(Math.max(1, Math.ceil(left / 1000)));
      }
      const user = await repo.findUserByEmail(this.db, key);
      const matches = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
      checked = true;
      if (!user || !matches || user.passwordHash === null || user.disabled) throw invalidCredentials();
      // A success forgets the failures, and is not one of the address's.
      await repo.clearSignInFailures(this.db, key);
      giveBack();
      return user;
    } catch (error) {
      // Only a password checked and refused counts against the address: not a locked e-mail's refusal
      // (no guess was checked), nor a database's failure.
      if (!checked) giveBack();
      throw error;
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

/**
 * Attempts per address in fixed windows of ADDRESS_WINDOW_MS, from the window's first attempt. An
 * attempt is counted as it starts and given back if it succeeds, so the count includes attempts in flight.
 */
class AddressAttempts {
  /** address → attempts counted in the current window and when it started. */
  private readonly windows = new Map<string, { count: number; since: number }>();

  /** Counts an attempt from `address`, or refuses it (429); answers what gives the attempt back (once). */
  take(address: string, now: number): () => void {
    let window = this.windows.get(address);
    if (window && now - window.since >= ADDRESS_WINDOW_MS) window = undefined;
    if (window && window.count >= ADDRESS_FAILURES) {
      throw new TooManyAttempts(Math.ceil((window.since + ADDRESS_WINDOW_MS - now) / 1000));
    }
    if (!window) {
      window = { count: 0, since: now };
      this.windows.set(address, window);
      this.sweep(now);
    }
    const counted = window;
    counted.count++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      counted.count--;
      // Nothing left in it: the window ends, and the next attempt starts a new one.
      if (counted.count === 0 && this.windows.get(address) === counted) this.windows.delete(address);
    };
  }

  /** Bounded: windows that ended are dropped when the map grows large (a scan of many addresses). */
  private sweep(now: number): void {
    if (this.windows.size <= 10_000) return;
    for (const [key, value] of this.windows) if (now - value.since >= ADDRESS_WINDOW_MS) this.windows.delete(key);
  }
}
