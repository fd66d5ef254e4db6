import { type Static, Type } from "typebox";
import { NAME_MAX_LENGTH } from "../contract/limits.js";
import { Limits, Timestamp } from "./common.js";

export const ProjectSchema = Type.Object(
  { id: Type.String(), name: Type.String(), createdAt: Timestamp },
  { $id: "Project" },
);
/** A project: the container of flags, segments, actors and project keys. */
export type Project = Static<typeof ProjectSchema>;

export const CreateProjectBody = Type.Object(
  { id: Limits.projectId, name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }) },
  { additionalProperties: false },
);
/** Body of a project's create. */
export type CreateProjectInput = Static<typeof CreateProjectBody>;
