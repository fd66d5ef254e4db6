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

export const WhoAmISchema = Type.Object(
  {
    keyId: Type.String(),
    name: Type.String(),
    role: KeyRole,
    projectId: Type.Union([Type.String(), Type.Null()], { description: "null for an admin key" }),
    environment: ENVIRONMENT,
  },
  { $id: "WhoAmI" },
);
/** Answer of `whoami`: the key the client uses. */
export type WhoAmI = Static<typeof WhoAmISchema>;
