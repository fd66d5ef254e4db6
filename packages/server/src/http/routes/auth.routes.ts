import { AuthMethodsSchema, AuthSessionSchema, LoginBody, UserSchema } from "@flagstaff/core/schemas";
import { parseCookie, stringifySetCookie } from "cookie";
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { hashToken } from "../../kernel/ids.js";
import {
  type OidcAttempt,
  OidcError,
  type OidcIdentity,
  OidcSignIn,
  type OidcSettings,
} from "../../features/people/oidc-client.js";
import type { PeopleService } from "../../features/people/people.service.js";
import { Type } from "typebox";
import { AppError } from "../../kernel/errors.js";
import { refuseCrossSite } from "../same-origin.js";
import { errorResponses } from "../schemas.js";
import { NoContent } from "../../kernel/schemas.js";
import type { TypedApp } from "../typed-app.js";
import type { Sessions } from "../../features/people/sessions.js";
import { type SignInService, TooManyAttempts } from "../../features/people/sign-in.service.js";

export interface AuthRouteOptions {
  readonly passwordSignIn: boolean;
  /** The single sign-on button's label; undefined when OIDC is not configured. */
  readonly oidcName: string | undefined;
  readonly ownOrigin: (request: FastifyRequest) => string;
}

/** Where the console's sign-in page is, for the redirects that end a browser's sign-in. */
export const CONSOLE_PATH = "/console/";
/** Where a one-time sign-in link lands: the person's own page, saying how to sign in next time. */
export const LINK_LANDING = `${CONSOLE_PATH}me?signedInBy=link`;

/**
 * Signing in and out. Sign-in answers set a new session cookie (see Sessions); sign-in itself is refused
 * from another site's pages (login CSRF: signing a victim in as the attacker).
 */
export function authRoutes(app: TypedApp, signIn: SignInService, sessions: Sessions, options: AuthRouteOptions): void {
  const tags = ["sign-in"];

  app.get(
    "/auth/methods",
    {
      config: { access: "public" },
      schema: {
        tags,
        summary: "What the sign-in page offers: password sign-in, single sign-on",
        security: [],
        response: { 200: AuthMethodsSchema },
      },
    },
    async () => ({
      password: options.passwordSignIn,
      oidc: options.oidcName === undefined ? null : { name: options.oidcName },
    }),
  );

  app.get(
    "/auth/session",
    {
      config: { access: "public" },
      schema: {
        tags,
        summary: "Whether this browser's session cookie signs a person in",
        description:
          "Answers 200 either way, so that a page asking whether it is signed in (the web console, at each load) " +
          "gets no 401 when it is not, which browsers log as an error. Then `GET /whoami` names the person.",
        security: [],
        response: {
          200: AuthSessionSchema,
          ...errorResponses(429, 500, 503),
        },
      },
    },
    async (request) => {
      const id = sessions.presented(request);
      return { signedIn: id !== undefined && (await sessions.principalOf(id)) !== undefined };
    },
  );

  app.post(
    "/auth/login",
    {
      config: { access: "public" },
      schema: {
        tags,
        summary: "Sign in with an e-mail and a password; sets the session cookie",
        security: [],
        body: LoginBody,
        response: {
          200: Type.Object({ user: UserSchema }),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      if (!options.passwordSignIn) {
        throw new AppError(
          404,
          "not_found",
          "Password sign-in is turned off here (PASSWORD_SIGN_IN=false): use single sign-on.",
        );
      }
      refuseForeignSignIn(request, options.ownOrigin(request));
      try {
        const user = await signIn.withPassword(request.body.email, request.body.password, request.ip);
        await sessions.start(reply, user.id);
        return { user };
      } catch (error) {
        if (error instanceof TooManyAttempts) reply.header("retry-after", error.retryAfterSeconds);
        throw error;
      }
    },
  );

  app.post(
    "/auth/logout",
    {
      config: { access: "public" },
      schema: {
        tags,
        summary: "Sign out: end this session and clear its cookie",
        security: [],
        response: { 204: NoContent, ...errorResponses(403, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const id = sessions.presented(request);
      if (id !== undefined) {
        refuseCrossSite(request, options.ownOrigin(request));
        await sessions.end(id);
      }
      sessions.clear(reply);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/auth/link",
    {
      config: { access: "public" },
      schema: {
        tags,
        summary: "Use a one-time sign-in link (from `admin-key user create`); redirects to the console's Me page",
        security: [],
        querystring: Type.Object({ token: Type.String({ maxLength: 256 }) }, { additionalProperties: false }),
        response: { 302: Type.Null(), ...errorResponses(400, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const user = await signIn.withLink(request.query.token);
      if (!user) return redirectToSignIn(reply, "link_invalid");
      await sessions.start(reply, user.id);
      // The link works once: the person lands on their page, which asks them to set a password there.
      return reply.redirect(LINK_LANDING, 302);
    },
  );
}

/** Sends a browser back to the console's sign-in page with the reason its sign-in failed. */
export function redirectToSignIn(reply: FastifyReply, reason: string): FastifyReply {
  return reply.redirect(`${CONSOLE_PATH}?signInError=${encodeURIComponent(reason)}`, 302);
}

/** A browser's sign-in from another site's page is refused; a program's (no such headers) is not. */
function refuseForeignSignIn(request: FastifyRequest, ownOrigin: string): void {
  if (request.headers["sec-fetch-site"] === undefined && request.headers.origin === undefined) return;
  refuseCrossSite(request, ownOrigin);
}

/** How long a single sign-on attempt may take, from the redirect to the provider to the callback. */
const OIDC_ATTEMPT_TTL_MS = 10 * 60_000;
/** The cookie that ties a sign-on attempt to the browser that started it (its state). */
const OIDC_COOKIE = "flagstaff_oidc";

export interface OidcRouteOptions {
  readonly settings: OidcSettings;
  readonly secure: boolean;
  readonly clock: Clock;
  readonly db: Kysely<Database>;
  readonly people: PeopleService;
  readonly sessions: Sessions;
  readonly log: FastifyBaseLogger;
}

/**
 * Single sign-on: `/auth/oidc/login` sends the browser to the provider with a new state, nonce and PKCE
 * verifier (kept server-side, one use, ten minutes, and tied to this browser by a cookie holding the
 * state); `/auth/oidc/callback` checks all of it through openid-client, then signs the person in. Every
 * failure sends the browser back to the sign-in page with the reason and creates nothing.
 */
export function oidcRoutes(app: TypedApp, options: OidcRouteOptions): void {
  const { settings, clock, db, people, sessions } = options;
  // Discovered at the first sign-in, and again after a failure: a provider down at start does not stop the server.
  let discovered: Promise<OidcSignIn> | undefined;
  const provider = () => {
    discovered ??= OidcSignIn.discover(settings).catch((error) => {
      discovered = undefined;
      throw error;
    });
    return discovered;
  };
  const cookie = (value: string, maxAge: number) =>
    stringifySetCookie({
      name: OIDC_COOKIE,
      value,
      httpOnly: true,
      // Lax: the provider's redirect back is a top-level GET, which carries it.
      sameSite: "lax",
      secure: options.secure,
      path: "/auth/oidc",
      maxAge,
    });

  app.get(
    "/auth/oidc/login",
    {
      config: { access: "public" },
      schema: {
        tags: ["sign-in"],
        summary: "Start single sign-on: redirects to the identity provider",
        security: [],
        querystring: Type.Object(
          {
            returnTo: Type.Optional(
              Type.String({
                maxLength: 2048,
                pattern: NO_CONTROL_CHARACTERS,
                description:
                  "A console path to come back to (under /console/; anything else comes back to /console/). Control characters are refused.",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 302: Type.Null(), ...errorResponses(400, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      let attempt: OidcAttempt;
      try {
        attempt = await (await provider()).begin();
      } catch (error) {
        options.log.warn({ err: error }, "single sign-on could not start");
        return redirectToSignIn(reply, error instanceof OidcError ? error.code : "provider_unreachable");
      }
      await db
        .insertInto("sign_in_tokens")
        .values({
          id_hash: hashToken(attempt.state),
          kind: "oidc",
          user_id: null,
          data: JSON.stringify({
            nonce: attempt.nonce,
            codeVerifier: attempt.codeVerifier,
            returnTo: consolePath(request.query.returnTo),
          }),
          expires_at: isoTime(clock.now() + OIDC_ATTEMPT_TTL_MS),
        })
        .execute();
      reply.header("set-cookie", cookie(attempt.state, OIDC_ATTEMPT_TTL_MS / 1000));
      return reply.redirect(attempt.url, 302);
    },
  );

  app.get(
    "/auth/oidc/callback",
    {
      config: { access: "public" },
      schema: {
        tags: ["sign-in"],
        summary: "Where the identity provider sends the person back; signs them in and redirects to the console",
        security: [],
        // The provider's parameters vary (code, state, iss, session_state, error…): openid-client reads them.
        querystring: Type.Object({}, { additionalProperties: true }),
        response: { 302: Type.Null(), ...errorResponses(400, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      reply.header("set-cookie", cookie("", 0));
      const query = request.query as Record<string, unknown>;
      const state = typeof query.state === "string" ? query.state : undefined;
      const header = request.headers.cookie;
      const bound = header === undefined ? undefined : parseCookie(header)[OIDC_COOKIE];
      // The state must be the one this browser was sent with: a callback made for another browser (a
      // forged or replayed link) stops here.
      if (state === undefined || bound === undefined || bound !== state)
        return redirectToSignIn(reply, "state_mismatch");
      const row = await db
        .deleteFrom("sign_in_tokens")
        .where("id_hash", "=", hashToken(state))
        .where("kind", "=", "oidc")
        .returning(["data", "expires_at"])
        .executeTakeFirst();
      if (!row || row.data === null || Date.parse(row.expires_at) <= clock.now()) {
        return redirectToSignIn(reply, "attempt_expired");
      }
      const saved = JSON.parse(row.data) as { nonce: string; codeVerifier: string; returnTo: string };
      let identity: OidcIdentity;
      try {
        const url = new URL(request.url, settings.redirectUri);
        identity = await (await provider()).finish(url, {
          state,
          nonce: saved.nonce,
          codeVerifier: saved.codeVerifier,
        });
      } catch (error) {
        if (!(error instanceof OidcError)) throw error;
        options.log.info({ reason: error.code, detail: error.message }, "a single sign-on was refused");
        return redirectToSignIn(reply, error.code);
      }
      const user = await people.signedInByProvider(identity.email, identity.name, identity.admin);
      if (!user) return redirectToSignIn(reply, "account_disabled");
      await sessions.start(reply, user.id);
      // Checked again: an attempt stored by an earlier version may hold anything.
      return reply.redirect(consolePath(saved.returnTo), 302);
    },
  );
}

/** Control characters (Unicode's Cc: C0, DEL, C1), which no path has and no header may carry (CR, LF). */
const NO_CONTROL_CHARACTERS = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";
const WITHOUT_CONTROL_CHARACTERS = new RegExp(NO_CONTROL_CHARACTERS);
/** A base to resolve a returnTo against: only its path, query and fragment are kept. */
const OWN = "http://flagstaff.invalid";

/**
 * A path inside the console to return to after sign-in, as a Location header may carry it: resolved
 * (dot segments) and percent-encoded, so it is printable ASCII, never CR or LF. Anything else (another
 * site, a path outside the console) is the console's home.
 */
function consolePath(returnTo: string | undefined): string {
  if (
    returnTo === undefined ||
    !returnTo.startsWith(CONSOLE_PATH) ||
    returnTo.includes("\\") ||
    !WITHOUT_CONTROL_CHARACTERS.test(returnTo)
  ) {
    return CONSOLE_PATH;
  }
  const url = new URL(returnTo, OWN);
  if (url.origin !== OWN || !url.pathname.startsWith(CONSOLE_PATH)) return CONSOLE_PATH;
  return `${url.pathname}${url.search}${url.hash}`;
}
