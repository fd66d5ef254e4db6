import { type Static, Type } from "typebox";
import { NAME_MAX_LENGTH, REQUIRED_APPROVALS_MAX } from "../contract/limits.js";
import { Limits, Timestamp } from "./common.js";

export const EnvironmentSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    default: Type.Boolean({
      description: "The project's default environment: what a key bound to no environment acts on",
    }),
    protected: Type.Boolean({
      description: "Only the project's admins change its configurations. Extension.",
    }),
    requiredApprovals: Type.Integer({
      minimum: 0,
      maximum: REQUIRED_APPROVALS_MAX,
      description:
        "Approvals a change request needs before its changes are applied here; above 0, a direct change to a flag's configuration here is refused (409 approval_required). Extension.",
    }),
    allowSelfApproval: Type.Boolean({
      description: "Whether a change request's author may approve it themselves. Extension.",
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "Environment", description: "An environment of a project: each holds its own configuration of every flag" },
);
/** An environment of a project (development, staging, production…): its own configuration of every flag. */
export type Environment = Static<typeof EnvironmentSchema>;

const EnvironmentName = Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH });
const RequiredApprovals = Type.Integer({
  minimum: 0,
  maximum: REQUIRED_APPROVALS_MAX,
  description:
    "0 to 5: approvals a change request needs here; above 0, direct changes to flags' configurations are refused",
});
const AllowSelfApproval = Type.Boolean({ description: "Whether a change request's author may approve it themselves" });

export const CreateEnvironmentBody = Type.Object(
  {
    id: Limits.environmentId,
    name: EnvironmentName,
    description: Type.Optional(Limits.description),
    protected: Type.Optional(Type.Boolean({ description: "Only the project's admins change its configurations" })),
    requiredApprovals: Type.Optional(RequiredApprovals),
    allowSelfApproval: Type.Optional(AllowSelfApproval),
    copyFrom: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "An environment of the project whose configuration of every flag the new one starts with; without it, every flag starts disabled",
      }),
    ),
  },
  { additionalProperties: false },
);
/** Body of an environment's create. */
export type CreateEnvironmentInput = Static<typeof CreateEnvironmentBody>;

export const UpdateEnvironmentBody = Type.Object(
  {
    name: Type.Optional(EnvironmentName),
    description: Type.Optional(Limits.description),
    default: Type.Optional(
      Type.Literal(true, { description: "true makes this the project's default environment (there is always one)" }),
    ),
    protected: Type.Optional(Type.Boolean({ description: "Only the project's admins change its configurations" })),
    requiredApprovals: Type.Optional(RequiredApprovals),
    allowSelfApproval: Type.Optional(AllowSelfApproval),
    position: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000,
        description:
          "Moves it to this place in the project's order (1 for the first, at most the number of environments); the others keep their order around it",
      }),
    ),
  },
  { additionalProperties: false },
);
/** Body of an environment's update. */
export type UpdateEnvironmentInput = Static<typeof UpdateEnvironmentBody>;

/** An environment named at a project's creation. */
export const NewProjectEnvironment = Type.Object(
  {
    id: Limits.environmentId,
    name: EnvironmentName,
    description: Type.Optional(Limits.description),
    protected: Type.Optional(Type.Boolean({ description: "Only the project's admins change its configurations" })),
  },
  { additionalProperties: false },
);
