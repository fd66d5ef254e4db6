import { type Static, Type } from "typebox";
import { NAME_MAX_LENGTH } from "../contract/limits.js";
import { Limits, Timestamp } from "./common.js";
import { NewProjectEnvironment } from "./environments.js";

export const ProjectSchema = Type.Object(
  { id: Type.String(), name: Type.String(), createdAt: Timestamp },
  { $id: "Project" },
);
/** A project: the container of flags, segments, actors and project keys. */
export type Project = Static<typeof ProjectSchema>;

export const CreateProjectBody = Type.Object(
  {
    id: Limits.projectId,
    name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
    environments: Type.Optional(
      Type.Array(NewProjectEnvironment, {
        minItems: 1,
        description:
          "The project's environments, the first its default; without it, one: production (Production). Extension.",
      }),
    ),
  },
  { additionalProperties: false },
);
/** Body of a project's create. */
export type CreateProjectInput = Static<typeof CreateProjectBody>;
