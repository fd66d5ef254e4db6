import { type Static, Type } from "typebox";
import { GRANT_ROLES, KEY_ROLES, USER_ROLES } from "../contract/enums.js";
import { EMAIL_MAX_LENGTH, EMAIL_MIN_LENGTH, EMAIL_PATTERN } from "../contract/ids.js";
import { NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../contract/limits.js";
import { NullableTimestamp, oneOf, Timestamp } from "./common.js";

/** The password rule's one home is the contract (limits.ts); named here too, where the server has always read it. */
export { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH };
/** The rule's one home is the contract (ids.ts: EMAIL_PATTERN, isEmail, normalizeEmail). */
const Email = Type.String({
  minLength: EMAIL_MIN_LENGTH,
  maxLength: EMAIL_MAX_LENGTH,
  pattern: EMAIL_PATTERN,
  description: "An e-mail address; stored and compared with A–Z lower-cased (no other case mapping)",
});
const PersonName = Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH });
const Password = Type.String({
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: PASSWORD_MAX_LENGTH,
  description: `${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters`,
});
const UserRole = oneOf(USER_ROLES);
const GrantRole = oneOf(GRANT_ROLES);

export const UserSchema = Type.Object(
  {
    id: Type.String({ description: "usr_ and a ULID" }),
    email: Type.String(),
    name: Type.String(),
    role: UserRole,
    disabled: Type.Boolean(),
    createdAt: Timestamp,
    lastSignInAt: NullableTimestamp,
    hasPassword: Type.Boolean({ description: "Whether the person may sign in with a password" }),
  },
  { $id: "User", description: "A person who signs in to the console" },
);
export type User = Static<typeof UserSchema>;

export const CreateUserBody = Type.Object(
  {
    email: Email,
    name: PersonName,
    role: Type.Optional(UserRole),
    password: Type.Optional(Password),
  },
  { additionalProperties: false },
);
export type CreateUserInput = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(PersonName),
    role: Type.Optional(UserRole),
    disabled: Type.Optional(Type.Boolean()),
    password: Type.Optional(Type.Union([Password, Type.Null()], { description: "null removes the password" })),
  },
  { additionalProperties: false },
);
export type UpdateUserInput = Static<typeof UpdateUserBody>;

/** Body of `PUT /users/me/password`: a person sets or changes their own password. */
export const SetOwnPasswordBody = Type.Object(
  {
    currentPassword: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: PASSWORD_MAX_LENGTH,
        description: "Your password now: required when you have one, checked (and counted) as a sign-in is",
      }),
    ),
    newPassword: Password,
  },
  { additionalProperties: false },
);
export type SetOwnPasswordInput = Static<typeof SetOwnPasswordBody>;

export const GrantSchema = Type.Object(
  {
    userId: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role: GrantRole,
    createdAt: Timestamp,
  },
  { $id: "Grant", description: "A person's access to a project" },
);
export type Grant = Static<typeof GrantSchema>;

export const GrantBody = Type.Object({ role: GrantRole }, { additionalProperties: false });
/** Body of a grant: the role on the project. */
export type GrantInput = Static<typeof GrantBody>;

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: EMAIL_MAX_LENGTH }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
  },
  { additionalProperties: false },
);

/** Body of a password sign-in. */
export type LoginInput = Static<typeof LoginBody>;

export const AuthSessionSchema = Type.Object({
  signedIn: Type.Boolean({ description: "The cookie names a session that has not ended" }),
});
/** Answer of `GET /auth/session`: whether the browser's session cookie signs a person in. */
export type AuthSession = Static<typeof AuthSessionSchema>;

export const AuthMethodsSchema = Type.Object({
  password: Type.Boolean({ description: "E-mail and password sign-in is on" }),
  oidc: Type.Union([Type.Object({ name: Type.String() }), Type.Null()], {
    description: "Single sign-on: the button's label; null when not configured",
  }),
});
/** What the sign-in page offers. */
export type AuthMethods = Static<typeof AuthMethodsSchema>;

export const CreatePersonalKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
    project: Type.Optional(
      Type.String({
        minLength: 1,
        description: "The one project it acts on; absent: every project the person reaches",
      }),
    ),
    environment: Type.Optional(
      Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
        description:
          "The environment it is bound to (with project); default the project's default. null (admin and write " +
          "keys): bound to none, like a write key bound to none; only such a key reaches what belongs to the " +
          "whole project (webhooks, access, environments)",
      }),
    ),
    role: Type.Optional(oneOf(KEY_ROLES, { description: "Its highest role; default read" })),
  },
  { additionalProperties: false },
);
export type CreatePersonalKeyInput = Static<typeof CreatePersonalKeyBody>;

export const PersonalKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    role: oneOf(KEY_ROLES),
    projectId: Type.Union([Type.String(), Type.Null()], { description: "null: every project the person reaches" }),
    environment: Type.Union([Type.String(), Type.Null()]),
    userId: Type.String(),
    createdAt: Timestamp,
  },
  { $id: "PersonalKey", description: "A key that acts for a person, never with more than the person holds" },
);
export type PersonalKey = Static<typeof PersonalKeySchema>;

export const CreatedPersonalKeySchema = Type.Object(
  {
    ...PersonalKeySchema.properties,
    key: Type.String({ description: "The secret. Shown in this answer only; store it now." }),
  },
  { $id: "CreatedPersonalKey" },
);
export type CreatedPersonalKey = Static<typeof CreatedPersonalKeySchema>;

/** The person behind a session or a personal key, as whoami and the history name them. */
export const PersonSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: UserRole,
});
/** The person behind a session or a personal key. */
export type Person = Static<typeof PersonSchema>;
