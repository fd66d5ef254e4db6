import { type Static, Type } from "typebox";
import { Timestamp } from "../../http/schemas.js";

const ProjectRole = Type.Union([Type.Literal("write"), Type.Literal("read"), Type.Literal("check")]);

export const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    role: Type.Union([Type.Literal("admin"), ProjectRole]),
    projectId: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp,
  },
  { $id: "ApiKey", description: "An API key, without its secret" },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    role: ProjectRole,
    projectId: Type.String(),
    key: Type.String({ description: "The secret. Shown in this answer only; store it now." }),
    createdAt: Timestamp,
  },
  { $id: "CreatedApiKey" },
);
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;

export const CreateKeyBody = Type.Object(
  { role: ProjectRole, name: Type.String({ minLength: 1, maxLength: 128 }) },
  { additionalProperties: false },
);
export type CreateKeyInput = Static<typeof CreateKeyBody>;
