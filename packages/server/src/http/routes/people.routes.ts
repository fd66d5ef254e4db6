import {
  CreatedPersonalKeySchema,
  CreatePersonalKeyBody,
  CreateUserBody,
  GrantBody,
  GrantSchema,
  PersonalKeySchema,
  SetOwnPasswordBody,
  UpdateUserBody,
  UserSchema,
} from "@flagstaff/core/schemas";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { AppError } from "../../kernel/errors.js";
import { errorResponses } from "../schemas.js";
import { NoContent, PageOf, PageQuery, ProjectParams } from "../../kernel/schemas.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";
import { toPageQuery } from "../../kernel/pagination.js";
import type { PeopleService } from "../../features/people/people.service.js";
import type { Sessions } from "../../features/people/sessions.js";
import type { SignInService } from "../../features/people/sign-in.service.js";
import { TooManyAttempts } from "../../features/people/sign-in.service.js";

const UserParams = Type.Object({ userId: Type.String() });

/**
 * A password is a sign-in that outlives the key that set it: a person sets one only while signed in (or an
 * admin service key), never through a personal key, as a personal key makes no service keys (mintsKey).
 */
function refusePasswordByPersonalKey(request: FastifyRequest, password: unknown): void {
  if (password === undefined || request.principal?.userId === undefined || request.principal.via !== "key") return;
  throw new AppError(
    403,
    "forbidden",
    "A personal key cannot set a password: sign in to the console to set one (a leaked key must not mint a sign-in).",
  );
}
const GrantParams = Type.Object({ projectId: Type.String(), userId: Type.String() });

/** People (admins), project access (project admins), and a person's own keys and sessions. */
export function peopleRoutes(
  app: TypedApp,
  people: PeopleService,
  sessions: Sessions,
  signIn: SignInService,
  options: { readonly passwordSignIn: boolean },
): void {
  for (const schema of [UserSchema, GrantSchema, PersonalKeySchema, CreatedPersonalKeySchema]) app.addSchema(schema);
  const tags = ["people"];

  app.get(
    "/users",
    {
      config: { access: "admin" },
      schema: {
        tags,
        summary: "List people, oldest first (admin)",
        querystring: PageQuery,
        response: { 200: PageOf(Type.Ref("User")), ...errorResponses(400, 401, 403, 429, 500, 503) },
      },
    },
    async (request) => people.list(toPageQuery(request.query, 2)),
  );

  app.post(
    "/users",
    {
      config: { access: "admin" },
      schema: {
        tags,
        summary: "Add a person (admin)",
        description: "role defaults to member. With a password, they may sign in with it.",
        body: CreateUserBody,
        response: { 201: Type.Ref("User"), ...errorResponses(400, 401, 403, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      refusePasswordByPersonalKey(request, request.body.password);
      return reply.code(201).send(await people.create(writeContext(request), request.body));
    },
  );

  app.get(
    "/users/:userId",
    {
      config: { access: "admin" },
      schema: {
        tags,
        summary: "A person (admin)",
        params: UserParams,
        response: { 200: Type.Ref("User"), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => people.get(request.params.userId),
  );

  app.patch(
    "/users/:userId",
    {
      config: { access: "admin" },
      schema: {
        tags,
        summary: "Change a person: name, role, disabled, password (admin)",
        description:
          "A new or removed password, or disabled: true, ends the person's sessions; disabling also revokes their personal keys.",
        params: UserParams,
        body: UpdateUserBody,
        response: { 200: Type.Ref("User"), ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request) => {
      refusePasswordByPersonalKey(request, request.body?.password);
      return people.update(writeContext(request), request.params.userId, request.body);
    },
  );

  app.delete(
    "/users/:userId",
    {
      config: { access: "admin" },
      schema: {
        tags,
        summary: "Delete a person, with their grants, sessions and keys (admin)",
        params: UserParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await people.delete(writeContext(request), request.params.userId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/projects/:projectId/access",
    {
      config: { access: "admin" },
      schema: {
        tags,
        summary: "Who has access to the project, by e-mail (project admin)",
        params: ProjectParams,
        response: {
          200: Type.Object({ data: Type.Array(Type.Ref("Grant")) }),
          ...errorResponses(400, 401, 403, 404, 429, 500, 503),
        },
      },
    },
    async (request) => people.listGrants(request.params.projectId),
  );

  app.put(
    "/projects/:projectId/access/:userId",
    {
      config: { access: "admin", projectWide: "change who has access to the project" },
      schema: {
        tags,
        summary: "Grant a person admin, write or read on the project (project admin)",
        params: GrantParams,
        body: GrantBody,
        response: { 200: Type.Ref("Grant"), ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request) =>
      people.grant(writeContext(request), request.params.projectId, request.params.userId, request.body.role),
  );

  app.delete(
    "/projects/:projectId/access/:userId",
    {
      config: { access: "admin", projectWide: "change who has access to the project" },
      schema: {
        tags,
        summary: "Remove a person's grant on the project (project admin)",
        params: GrantParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await people.revokeGrant(writeContext(request), request.params.projectId, request.params.userId);
      return reply.code(204).send(null);
    },
  );

  const me = (request: { principal?: { userId?: string } }) => {
    const userId = request.principal?.userId;
    if (userId === undefined) throw new AppError(500, "internal", "A person's route was reached without a person.");
    return userId;
  };

  app.post(
    "/users/me/keys",
    {
      config: { access: "session" },
      schema: {
        tags,
        summary: "Create a personal key (signed-in person)",
        description:
          "It acts for you, never with more than you hold (its role and your rights now, whichever is less). The secret is in this answer only.",
        body: CreatePersonalKeyBody,
        response: {
          201: Type.Ref("CreatedPersonalKey"),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      me(request);
      const principal = request.principal as NonNullable<typeof request.principal>;
      return reply.code(201).send(await people.createKey(writeContext(request), principal, request.body));
    },
  );

  app.get(
    "/users/me/keys",
    {
      config: { access: "person" },
      schema: {
        tags,
        summary: "Your personal keys, oldest first, without secrets",
        response: {
          200: Type.Object({ data: Type.Array(Type.Ref("PersonalKey")) }),
          ...errorResponses(400, 401, 403, 429, 500, 503),
        },
      },
    },
    async (request) => people.listKeys(me(request)),
  );

  app.delete(
    "/users/me/keys/:keyId",
    {
      config: { access: "person" },
      schema: {
        tags,
        summary: "Revoke one of your personal keys",
        params: Type.Object({ keyId: Type.String() }),
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await people.revokeKey(writeContext(request), me(request), request.params.keyId);
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/users/me",
    {
      config: { access: "person" },
      schema: {
        tags,
        summary: "Yourself, as the users API shows a person (whether you have a password, your last sign-in)",
        response: { 200: Type.Ref("User"), ...errorResponses(400, 401, 403, 429, 500, 503) },
      },
    },
    async (request) => people.get(me(request)),
  );

  app.put(
    "/users/me/password",
    {
      config: { access: "session" },
      schema: {
        tags,
        summary: "Set or change your own password (signed-in person)",
        description:
          "currentPassword is required when you have a password, and is checked and counted as a sign-in is " +
          "(a wrong one is 401 invalid_credentials and counts towards the lockout, 429 too_many_attempts). " +
          "Every other session of yours ends; this one stays signed in. Only a session may: a key is refused " +
          "(403). Refused (403) when PASSWORD_SIGN_IN=false.",
        body: SetOwnPasswordBody,
        response: { 200: Type.Ref("User"), ...errorResponses(400, 401, 403, 412, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const userId = me(request);
      if (!options.passwordSignIn) {
        throw new AppError(
          403,
          "forbidden",
          "Password sign-in is turned off here (PASSWORD_SIGN_IN=false): a password could not be used. Sign in with single sign-on.",
        );
      }
      const session = request.principal?.session;
      if (session === undefined) throw new AppError(500, "internal", "A session's route was reached without one.");
      try {
        return await people.setOwnPassword(writeContext(request), userId, session, request.body, (email, current) =>
          signIn.checkCurrent(userId, email, current, request.ip),
        );
      } catch (error) {
        if (error instanceof TooManyAttempts) reply.header("retry-after", error.retryAfterSeconds);
        throw error;
      }
    },
  );

  app.delete(
    "/users/me/sessions",
    {
      config: { access: "person" },
      schema: {
        tags,
        summary: "Sign out everywhere: end every one of your sessions",
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      await sessions.endAll(me(request));
      if (request.principal?.via === "session") sessions.clear(reply);
      return reply.code(204).send(null);
    },
  );
}
