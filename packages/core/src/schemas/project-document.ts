import { type Static, Type } from "typebox";
import { FLAG_KINDS, FLAG_STATUSES } from "../contract/enums.js";
import { SEGMENT_ID_MAX_LENGTH } from "../contract/ids.js";
import { REQUIRED_APPROVALS_MAX } from "../contract/limits.js";
import { ALLOWED_PERCENTAGES } from "../evaluation.js";
import { Limits, oneOf } from "./common.js";
import { RolloutStepSchema } from "./flags.js";
import { ConditionSchema, FlagTypeSchema, PrerequisiteSchema, RuleSchema, VariantSchema } from "./targeting.js";

// A project as one document (docs/flags-as-code.md): what `GET /projects/{p}/export` answers and what
// `POST /projects/{p}/apply` takes, and the plan apply answers. Its JSON Schema is served at /schemas/project-document.json and
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
    id: Type.String({ minLength: 1, maxLength: SEGMENT_ID_MAX_LENGTH }),
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

// ---------------------------------------------------------------------------------------------------
// Apply: the plan that takes a project to a document.

export const PLAN_OBJECTS = ["environment", "segment", "flag", "configuration"] as const;
export const PLAN_ACTIONS = ["create", "update", "delete"] as const;

export const PlanFieldSchema = Type.Object(
  {
    field: Type.String(),
    before: Type.Optional(Type.Unknown({ description: "Its value now (absent for a set of ids)" })),
    after: Type.Optional(Type.Unknown({ description: "Its value in the document (absent for a set of ids)" })),
    added: Type.Optional(Type.Array(Type.String(), { description: "A set of ids (actors, segments, members): added" })),
    removed: Type.Optional(Type.Array(Type.String(), { description: "A set of ids: removed" })),
  },
  { additionalProperties: false },
);
export type PlanField = Static<typeof PlanFieldSchema>;

export const PlanChangeSchema = Type.Object(
  {
    object: oneOf(PLAN_OBJECTS, {
      description:
        "environment (its settings), segment, flag (its definition: every environment's) or configuration (a flag's in one environment)",
    }),
    action: oneOf(PLAN_ACTIONS),
    id: Type.String({ description: "The environment's or segment's id, or the flag's name" }),
    environment: Type.Optional(Type.String({ description: "A configuration's environment" })),
    fields: Type.Array(PlanFieldSchema, { description: "What changes (a create: what differs from a new one's)" }),
    changeRequest: Type.Optional(
      Type.Boolean({
        description: "true: the environment requires approvals, so the change goes into its change request",
      }),
    ),
  },
  { additionalProperties: false },
);
export type PlanChange = Static<typeof PlanChangeSchema>;

export const ApplyResultSchema = Type.Object(
  {
    dryRun: Type.Boolean({ description: "true: the plan only; nothing was changed" }),
    baseRevision: Type.Integer({ description: "The project's revision the plan was made from" }),
    revision: Type.Integer({ description: "The project's revision after (the base one when nothing changed)" }),
    changes: Type.Array(PlanChangeSchema, { description: "In the order they are made; []: nothing to do" }),
    changeRequests: Type.Array(
      Type.Object(
        { id: Type.String(), environment: Type.String(), title: Type.String() },
        { additionalProperties: false },
      ),
      { description: "The change requests opened for environments that require approvals (none in a dry run)" },
    ),
  },
  { additionalProperties: false, description: "What apply did, or (dry run) would do" },
);
export type ApplyResult = Static<typeof ApplyResultSchema>;
