import { type Static, Type } from "typebox";
import { Limits, Timestamp } from "../../http/schemas.js";

export const ProjectSchema = Type.Object(
  { id: Type.String(), name: Type.String(), createdAt: Timestamp },
  { $id: "Project" },
);
export type Project = Static<typeof ProjectSchema>;

export const CreateProjectBody = Type.Object(
  { id: Limits.projectId, name: Type.String({ minLength: 1, maxLength: 128 }) },
  { additionalProperties: false },
);
export type CreateProjectInput = Static<typeof CreateProjectBody>;
