import { AuthMethodsSchema, LoginBody, UserSchema } from "@flagstaff/core/schemas";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { AppError } from "../../errors.js";
import { refuseCrossSite } from "../../http/same-origin.js";
import { errorResponses, NoContent } from "../../http/schemas.js";
import type { TypedApp } from "../../http/typed-app.js";
import type { Sessions } from "./sessions.js";
import { type SignInService, TooManyAttempts } from "./sign-in.service.js";

export interface AuthRouteOptions {
  readonly passwordSignIn: boolean;
  /** The single sign-on button's label; undefined when OIDC is not configured. */
  readonly oidcName: string | undefined;
  readonly ownOrigin: (request: FastifyRequest) => string;
}

/** Where the console's sign-in page is, for the redirects that end a browser's sign-in. */
export const CONSOLE_PATH = "/console/";

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
        throw new AppError(404, "not_found", "Password sign-in is turned off here (PASSWORD_SIGN_IN=false): use single sign-on.");
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
        summary: "Use a one-time sign-in link (from `admin-key user create`); redirects to the console",
        security: [],
        querystring: Type.Object({ token: Type.String({ maxLength: 256 }) }, { additionalProperties: false }),
        response: { 302: Type.Null(), ...errorResponses(400, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const user = await signIn.withLink(request.query.token);
      if (!user) return redirectToSignIn(reply, "link_invalid");
      await sessions.start(reply, user.id);
      return reply.redirect(CONSOLE_PATH, 302);
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

