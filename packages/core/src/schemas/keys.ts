import { type Static, Type } from "typebox";
import { KEY_ROLES, PROJECT_ROLES } from "../contract/enums.js";
import { NAME_MAX_LENGTH } from "../contract/limits.js";
import { oneOf, Timestamp } from "./common.js";

const ProjectRole = oneOf(PROJECT_ROLES);
const ENVIRONMENT = Type.Union([Type.String(), Type.Null()], {
  description:
    "The environment the key is bound to: it reads, checks and changes that environment only. null: bound to none (admin keys, and write keys made so). Extension.",
});
const KeyRole = oneOf(KEY_ROLES);

export const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    role: Type.Union([Type.Literal("admin"), ProjectRole]),
    projectId: Type.Union([Type.String(), Type.Null()]),
    environment: ENVIRONMENT,
    createdAt: Timestamp,
  },
  { $id: "ApiKey", description: "An API key, without its secret" },
);
/** An API key, admin or of a project, without its secret. */
export type AnyApiKey = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    role: ProjectRole,
    projectId: Type.String(),
    environment: ENVIRONMENT,
    key: Type.String({ description: "The secret. Shown in this answer only; store it now." }),
    createdAt: Timestamp,
  },
  { $id: "CreatedApiKey" },
);
/** A project API key as answered by the create call: the only time the secret `key` is shown. */
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;

export const CreateKeyBody = Type.Object(
  {
    role: ProjectRole,
    name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
    environment: Type.Optional(
      Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
        description:
          "The environment the key is bound to; default the project's default environment. null (write keys only): bound to none. Extension.",
      }),
    ),
  },
  { additionalProperties: false },
);
/** Body of a project key's create. */
export type CreateKeyInput = Static<typeof CreateKeyBody>;

export const UpdateKeyBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH })) },
  { additionalProperties: false },
);
/** Body of a key's update: its name (a label; the secret, role and environment never change). */
export type UpdateKeyInput = Static<typeof UpdateKeyBody>;

export const WhoAmISchema = Type.Object(
  {
    keyId: Type.String({ description: "The key's id; for a session, an id of the session (ses_…)" }),
    name: Type.String({ description: "The key's name; for a session, the person's" }),
    role: {
      ...KeyRole,
      description:
        "The key's role. A person's session: admin for an admin, otherwise write or read, the most any grant gives (see grants)",
    },
    projectId: Type.Union([Type.String(), Type.Null()], {
      description: "null for an admin key, a session, or a personal key of no project",
    }),
    environment: ENVIRONMENT,
    via: Type.Optional(
      Type.Union([Type.Literal("session"), Type.Literal("key")], {
        description: "A person's: signed in (session) or with a personal key. Absent for service keys. Extension.",
      }),
    ),
    user: Type.Optional(
      Type.Object(
        {
          id: Type.String(),
          email: Type.String(),
          name: Type.String(),
          role: Type.Union([Type.Literal("admin"), Type.Literal("member")]),
        },
        { description: "The person behind a session or a personal key. Extension." },
      ),
    ),
    grants: Type.Optional(
      Type.Array(
        Type.Object({
          projectId: Type.String(),
          role: Type.Union([Type.Literal("admin"), Type.Literal("write"), Type.Literal("read")]),
        }),
        { description: "The person's project grants (an admin reaches every project regardless). Extension." },
      ),
    ),
  },
  { $id: "WhoAmI" },
);
/** Answer of `whoami`: the key the client uses. */
export type WhoAmI = Static<typeof WhoAmISchema>;
