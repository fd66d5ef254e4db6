import { type Static, Type } from "typebox";
import { FLAG_KINDS, FLAG_STATUSES } from "../contract/enums.js";
import { REQUIRED_APPROVALS_MAX } from "../contract/limits.js";
import { ALLOWED_PERCENTAGES } from "../evaluation.js";
import { Limits, oneOf } from "./common.js";
import { RolloutStepSchema } from "./flags.js";
import { ConditionSchema, FlagTypeSchema, PrerequisiteSchema, RuleSchema, VariantSchema } from "./targeting.js";

// A project as one document (docs/flags-as-code.md): what `GET /projects/{p}/export` answers and, in the
// issue that follows, what `apply` takes. Its JSON Schema is served at /schemas/project-document.json and
// kept in the repository (schemas/project-document.schema.json), so that editors validate the file.

/** The version of the document's shape: it moves only with a change a reader must understand. */
export const PROJECT_DOCUMENT_VERSION = 1;

const Percentage = Type.Integer({ enum: [...ALLOWED_PERCENTAGES], description: "0, 1, 2, 5, 10, 25, 50, 75 or 100" });
const SortedIds = (description: string) => Type.Array(Type.String(), { uniqueItems: true, description });

export const DocumentEnvironmentSchema = Type.Object(
  {
    id: Limits.environmentId,
    name: Type.String(),
    description: Type.String(),
    default: Type.Boolean({ description: "The project's default environment (exactly one is)" }),
    protected: Type.Boolean(),
    requiredApprovals: Type.Integer({ minimum: 0, maximum: REQUIRED_APPROVALS_MAX }),
    allowSelfApproval: Type.Boolean(),
  },
  { additionalProperties: false, description: "An environment, in the project's order" },
);

export const DocumentSegmentSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    conditions: Type.Array(ConditionSchema, { description: "Rule-based membership ([]: listed members only)" }),
    members: Type.Optional(SortedIds("Its listed members, in order (exported with ?members=true only)")),
  },
  { additionalProperties: false },
);

export const DocumentConfigurationSchema = Type.Object(
  {
    status: oneOf(FLAG_STATUSES),
    percentageActors: Percentage,
    percentageCalls: Percentage,
    onVariant: Type.String(),
    offVariant: Type.String(),
    rules: Type.Array(RuleSchema),
    prerequisites: Type.Array(PrerequisiteSchema),
    rolloutPlan: Type.Optional(
      Type.Object(
        {
          steps: Type.Array(RolloutStepSchema, { minItems: 1 }),
          pausedAt: Type.Optional(Type.String({ format: "date-time" })),
        },
        { additionalProperties: false, description: "The timed rollout (absent: none)" },
      ),
    ),
    actors: SortedIds("The actors attached directly, in order"),
    segments: SortedIds("The segments attached, by id, in order"),
  },
  { additionalProperties: false, description: "A flag's configuration in one environment" },
);

export const DocumentFlagSchema = Type.Object(
  {
    name: Limits.flagName,
    description: Type.String(),
    type: FlagTypeSchema,
    variants: Type.Array(VariantSchema),
    kind: oneOf(FLAG_KINDS),
    permanent: Type.Boolean(),
    environments: Type.Record(Type.String(), DocumentConfigurationSchema, {
      description: "Its configuration in each environment, by environment id",
    }),
  },
  { additionalProperties: false },
);

export const ProjectDocumentSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String({ description: "Where this schema is served (for editors)" })),
    version: Type.Literal(PROJECT_DOCUMENT_VERSION),
    project: Type.Object({ id: Limits.projectId, name: Type.String() }, { additionalProperties: false }),
    environments: Type.Array(DocumentEnvironmentSchema, { minItems: 1 }),
    segments: Type.Array(DocumentSegmentSchema, { description: "By id" }),
    flags: Type.Array(DocumentFlagSchema, { description: "By name; archived flags are left out" }),
  },
  {
    $id: "urn:flagstaff:project-document:1",
    title: "Flagstaff project",
    description:
      "A Flagstaff project as one document: its environments, segments and flags with each environment's configuration (docs/flags-as-code.md)",
    additionalProperties: false,
  },
);
export type ProjectDocument = Static<typeof ProjectDocumentSchema>;
export type DocumentFlag = Static<typeof DocumentFlagSchema>;
export type DocumentConfiguration = Static<typeof DocumentConfigurationSchema>;
export type DocumentSegment = Static<typeof DocumentSegmentSchema>;
export type DocumentEnvironment = Static<typeof DocumentEnvironmentSchema>;

/** The document's JSON Schema as served and kept in the repository: with the dialect editors read it in. */
export const PROJECT_DOCUMENT_JSON_SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  ...ProjectDocumentSchema,
};
