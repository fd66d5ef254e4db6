import { compareText, defaultVariants, NAME_MAX_LENGTH, type RolloutPlan } from "@flagstaff/core";
import type {
  DocumentConfiguration,
  DocumentEnvironment,
  DocumentFlag,
  DocumentSegment,
  PlanChange,
  PlanField,
  ProjectDocument,
} from "@flagstaff/core/schemas";
import { invalid, type FieldError } from "../../kernel/errors.js";
import type { UpdateEnvironmentInput } from "../environments/environment.schemas.js";
import type { CreateFlagInput, UpdateFlagInput } from "../flags/flag.schemas.js";
import type { UpdateSegmentInput } from "../segments/segment.schemas.js";

// The plan that takes a project (its document now) to a document (docs/flags-as-code.md, "Apply"): what
// changes, object by object, in the order it can be made. Pure: the apply service reads the project and
// makes the steps, each through the write its own route makes.

/** One write of the plan, with the change it shows (none: the second half of a change shown already). */
export type PlanStep =
  | { readonly op: "environment"; readonly id: string; readonly input: UpdateEnvironmentInput }
  | { readonly op: "create-segment"; readonly segment: DocumentSegment }
  | { readonly op: "update-segment"; readonly id: string; readonly input: UpdateSegmentInput }
  | { readonly op: "create-flag"; readonly name: string; readonly input: CreateFlagInput }
  | { readonly op: "define-flag"; readonly name: string; readonly input: UpdateFlagInput }
  | {
      readonly op: "configure";
      readonly name: string;
      readonly environment: string;
      readonly input: UpdateFlagInput;
      /** The timed rollout exactly as the document has it, when it changes (null: none). */
      readonly plan?: RolloutPlan | null;
      /** The environment requires approvals: the change goes into its change request. */
      readonly approval: boolean;
    }
  | { readonly op: "delete-flag"; readonly name: string }
  | { readonly op: "delete-segment"; readonly id: string };

export interface Plan {
  /** What changes, in the order it is made: what apply answers. */
  readonly changes: PlanChange[];
  readonly steps: (PlanStep & { readonly change?: PlanChange })[];
}

/** JSON with its object keys in order: two values are the same when these are. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => compareText(a, b)))
      : v,
  );
}
const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);

/** A field whose value changes, or nothing. */
function changed(field: string, before: unknown, after: unknown): PlanField[] {
  return same(before, after) ? [] : [{ field, before, after }];
}

/** A set of ids that changes, or nothing. */
function setChanged(field: string, before: readonly string[], after: readonly string[]): PlanField[] {
  const had = new Set(before);
  const has = new Set(after);
  const added = [...has].filter((id) => !had.has(id)).sort(compareText);
  const removed = [...had].filter((id) => !has.has(id)).sort(compareText);
  return added.length === 0 && removed.length === 0 ? [] : [{ field, added, removed }];
}

/** The document's timed rollout as a flag's stored plan: pausedAt only when paused. */
export function planOf(configuration: DocumentConfiguration): RolloutPlan | null {
  const plan = configuration.rolloutPlan;
  if (plan === undefined) return null;
  return { steps: plan.steps as RolloutPlan["steps"], ...(plan.pausedAt ? { pausedAt: plan.pausedAt } : {}) };
}

/** A new flag's configuration in every environment (FlagService's create), to plan a created flag's from. */
function creationConfiguration(flag: DocumentFlag): DocumentConfiguration {
  const defaults = defaultVariants(flag.type, flag.variants as Parameters<typeof defaultVariants>[1]);
  return {
    status: "disabled",
    percentageActors: 0,
    percentageCalls: 0,
    onVariant: defaults.onVariant,
    offVariant: defaults.offVariant,
    rules: [],
    prerequisites: [],
    actors: [],
    segments: [],
  };
}

/** Refuses a document that names one thing twice, or that is another project's, before anything is read. */
export function refuseMalformed(projectId: string, desired: ProjectDocument): void {
  const problems: FieldError[] = [];
  if (desired.project.id !== projectId) {
    problems.push({
      path: "/project/id",
      message: `is "${desired.project.id}": this document is another project's (apply it to that one, or change project.id)`,
    });
  }
  const twice = (values: readonly string[], path: string, what: string) => {
    const seen = new Set<string>();
    values.forEach((value, index) => {
      if (seen.has(value)) problems.push({ path: `${path}/${index}`, message: `${what} "${value}" is listed twice` });
      seen.add(value);
    });
  };
  twice(
    desired.environments.map((e) => e.id),
    "/environments",
    "environment",
  );
  twice(
    desired.segments.map((s) => s.id),
    "/segments",
    "segment",
  );
  twice(
    desired.flags.map((f) => f.name),
    "/flags",
    "flag",
  );
  const defaults = desired.environments.filter((e) => e.default).length;
  if (defaults !== 1) {
    problems.push({ path: "/environments", message: `exactly one environment is the default (${defaults} are)` });
  }
  const known = new Set(desired.environments.map((e) => e.id));
  desired.flags.forEach((flag, index) => {
    for (const environment of Object.keys(flag.environments)) {
      if (!known.has(environment)) {
        problems.push({
          path: `/flags/${index}/environments/${environment}`,
          message: `environment "${environment}" is not one of the document's`,
        });
      }
    }
  });
  if (problems.length > 0) throw invalid("The document cannot be applied to this project.", problems);
}

/** The environment settings that change (the order included), with the PATCH that makes each. */
function planEnvironments(current: ProjectDocument, desired: ProjectDocument): Plan["steps"] {
  const now = current.environments.map((e) => e.id);
  const wanted = desired.environments.map((e) => e.id);
  const missing = now.filter((id) => !wanted.includes(id));
  const extra = wanted.filter((id) => !now.includes(id));
  if (missing.length > 0 || extra.length > 0) {
    throw invalid(
      "A document lists the project's environments, no more and no fewer: create and delete environments through the API or the console (they hold keys).",
      [
        ...missing.map((id) => ({ path: "/environments", message: `lacks the project's environment "${id}"` })),
        ...extra.map((id) => ({ path: "/environments", message: `names "${id}", which the project does not have` })),
      ],
    );
  }
  const steps: Plan["steps"] = [];
  const order = [...now];
  desired.environments.forEach((want: DocumentEnvironment, index) => {
    const have = current.environments.find((e) => e.id === want.id) as DocumentEnvironment;
    const input: { -readonly [K in keyof UpdateEnvironmentInput]: UpdateEnvironmentInput[K] } = {};
    const fields: PlanField[] = [];
    for (const field of ["name", "description", "protected", "requiredApprovals", "allowSelfApproval"] as const) {
      if (have[field] !== want[field]) {
        (input as Record<string, unknown>)[field] = want[field];
        fields.push({ field, before: have[field], after: want[field] });
      }
    }
    // Made the default here; the previous default stops being it with that same write.
    if (want.default && !have.default) {
      input.default = true;
      fields.push({ field: "default", before: false, after: true });
    }
    const from = order.indexOf(want.id);
    if (from !== index) {
      order.splice(from, 1);
      order.splice(index, 0, want.id);
      input.position = index + 1;
      fields.push({ field: "position", before: from + 1, after: index + 1 });
    }
    if (fields.length > 0) {
      steps.push({
        op: "environment",
        id: want.id,
        input,
        change: { object: "environment", action: "update", id: want.id, fields },
      });
    }
  });
  return steps;
}

/** A segment's name as the server keeps it (segment.service.ts trims it). */
const segmentNameOf = (segment: DocumentSegment) => segment.name.trim();

/**
 * A name a segment holds only while another takes its name within the same plan: its id, which no other
 * segment of the document wants (ids are unique), cut to a name's length.
 */
const placeholderName = (id: string) => `~${id}`.slice(0, NAME_MAX_LENGTH);

/**
 * Segments created and changed (deleted ones go last, once no flag names them). A segment whose name the
 * document gives another (a swap, or a new segment taking a pruned one's name) is first given a
 * placeholder, so that no write on the way finds the name taken.
 */
function planSegments(current: ProjectDocument, desired: ProjectDocument, prune: boolean): Plan["steps"] {
  const steps: Plan["steps"] = [];
  const existing = new Map(current.segments.map((s) => [s.id, s]));
  const wantedNames = new Map(desired.segments.map((s) => [segmentNameOf(s), s.id]));
  const inDocument = new Set(desired.segments.map((s) => s.id));
  for (const have of current.segments) {
    const taker = wantedNames.get(have.name);
    // A segment the document leaves out keeps its name unless it is pruned: then the name is taken (409).
    if (taker !== undefined && taker !== have.id && (prune || inDocument.has(have.id))) {
      steps.push({ op: "update-segment", id: have.id, input: { name: placeholderName(have.id) } });
    }
  }
  for (const want of desired.segments) {
    const have = existing.get(want.id);
    if (have === undefined) {
      const fields: PlanField[] = [
        { field: "name", after: segmentNameOf(want) },
        ...(want.description === "" ? [] : [{ field: "description", after: want.description }]),
        ...(want.conditions.length === 0 ? [] : [{ field: "conditions", after: want.conditions }]),
        ...setChanged("members", [], want.members ?? []),
      ];
      steps.push({
        op: "create-segment",
        segment: { ...want, name: segmentNameOf(want) },
        change: { object: "segment", action: "create", id: want.id, fields },
      });
      continue;
    }
    const fields = [
      ...changed("name", have.name, segmentNameOf(want)),
      ...changed("description", have.description, want.description),
      ...changed("conditions", have.conditions, want.conditions),
      // Listed members are planned only when the document lists them (exported with members=true).
      ...(want.members === undefined ? [] : setChanged("members", have.members ?? [], want.members)),
    ];
    if (fields.length === 0) continue;
    const input: { -readonly [K in keyof UpdateSegmentInput]: UpdateSegmentInput[K] } = {};
    for (const field of fields) {
      if (field.field === "members") {
        input.addActors = field.added as string[];
        input.removeActors = field.removed as string[];
      } else (input as Record<string, unknown>)[field.field] = field.after;
    }
    steps.push({
      op: "update-segment",
      id: want.id,
      input,
      change: { object: "segment", action: "update", id: want.id, fields },
    });
  }
  return steps;
}

/**
 * The configuration fields that change in one environment, with the PATCH that makes them. A timed
 * rollout is set exactly (its pause included) when applied, and by `paused` in a change request.
 */
function planConfiguration(
  name: string,
  environment: string,
  have: DocumentConfiguration,
  want: DocumentConfiguration,
  approval: boolean,
): Plan["steps"][number] | undefined {
  const fields: PlanField[] = [];
  const input: { -readonly [K in keyof UpdateFlagInput]: UpdateFlagInput[K] } = {};
  for (const field of [
    "status",
    "percentageActors",
    "percentageCalls",
    "onVariant",
    "offVariant",
    "rules",
    "prerequisites",
  ] as const) {
    const differs = changed(field, have[field], want[field]);
    if (differs.length > 0) {
      fields.push(...differs);
      (input as Record<string, unknown>)[field] = want[field];
    }
  }
  const plan = changed("rolloutPlan", have.rolloutPlan ?? null, want.rolloutPlan ?? null);
  fields.push(...plan);
  for (const [field, add, remove] of [
    ["actors", "addActors", "removeActors"],
    ["segments", "addSegments", "removeSegments"],
  ] as const) {
    const ids = setChanged(field, have[field], want[field]);
    if (ids.length === 0) continue;
    fields.push(...ids);
    const [{ added, removed }] = ids as [PlanField];
    if (added && added.length > 0) input[add] = added;
    if (removed && removed.length > 0) input[remove] = removed;
  }
  if (fields.length === 0) return undefined;
  const exact = plan.length > 0 ? planOf(want) : undefined;
  if (exact !== undefined && approval) {
    input.rolloutPlan = exact === null ? null : { steps: exact.steps as never, paused: Boolean(exact.pausedAt) };
  }
  return {
    op: "configure",
    name,
    environment,
    input,
    ...(exact !== undefined && !approval ? { plan: exact } : {}),
    approval,
    change: {
      object: "configuration",
      action: "update",
      id: name,
      environment,
      fields,
      ...(approval ? { changeRequest: true } : {}),
    },
  };
}

/**
 * The variants of a flag that something names now: its configurations (on and off variants, what rules
 * serve and split, a timed rollout's weights) and other flags' prerequisites on it.
 */
function variantsNamed(current: ProjectDocument, name: string): Set<string> {
  const keys = new Set<string>();
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) collect(item);
    else if (value !== null && typeof value === "object") {
      for (const [key, inner] of Object.entries(value)) {
        if (key === "variant" && typeof inner === "string") keys.add(inner);
        else collect(inner);
      }
    }
  };
  for (const flag of current.flags) {
    for (const configuration of Object.values(flag.environments)) {
      if (flag.name === name) {
        keys.add(configuration.onVariant).add(configuration.offVariant);
        collect(configuration.rules);
        collect(configuration.rolloutPlan);
      }
      for (const prerequisite of configuration.prerequisites) {
        if (prerequisite.flag === name) for (const key of prerequisite.variants) keys.add(key);
      }
    }
  }
  return keys;
}

/**
 * The flags in an order that lets each environment's prerequisites be set one flag at a time: a flag after
 * those it requires in the document, so no step makes a cycle on the way to a document that has none.
 */
function prerequisiteOrder(flags: readonly DocumentFlag[], environment: string): DocumentFlag[] {
  const byName = new Map(flags.map((f) => [f.name, f]));
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const order: DocumentFlag[] = [];
  const visit = (flag: DocumentFlag) => {
    if (placed.has(flag.name) || visiting.has(flag.name)) return;
    visiting.add(flag.name);
    for (const prerequisite of flag.environments[environment]?.prerequisites ?? []) {
      const required = byName.get(prerequisite.flag);
      if (required) visit(required);
    }
    visiting.delete(flag.name);
    placed.add(flag.name);
    order.push(flag);
  };
  for (const flag of flags) visit(flag);
  return order;
}

/**
 * The plan from `current` (the project's document now, with members when `desired` lists any) to
 * `desired`: environments' settings, segments created and changed, flags created and their definitions
 * changed, the configurations that lose prerequisites, then (with `prune`) the flags the document lacks
 * deleted, the other configurations, the variants it drops removed and (with `prune`) the segments it
 * lacks deleted. A variant a
 * configuration still serves is dropped from a definition only after the configurations moved off it and
 * the flags that required it were deleted (a second write of the same change).
 */
export function planApply(current: ProjectDocument, desired: ProjectDocument, prune: boolean): Plan {
  const steps: Plan["steps"] = [...planEnvironments(current, desired), ...planSegments(current, desired, prune)];
  const existing = new Map(current.flags.map((f) => [f.name, f]));
  // An environment that requires approvals now, or will once the document's settings are applied: its
  // configurations change only through a change request (the document cannot lower its own bar).
  const approvals = new Map(desired.environments.map((e) => [e.id, e.requiredApprovals > 0]));
  for (const environment of current.environments) {
    if (environment.requiredApprovals > 0) approvals.set(environment.id, true);
  }
  const finalVariants: Plan["steps"] = [];
  desired.flags.forEach((want, index) => {
    const have = existing.get(want.name);
    if (have === undefined) {
      const input: CreateFlagInput = {
        type: want.type,
        ...(want.type === "boolean" ? {} : { variants: want.variants as CreateFlagInput["variants"] }),
        ...(want.description === "" ? {} : { description: want.description }),
        kind: want.kind,
        permanent: want.permanent,
      };
      const fields: PlanField[] = [
        { field: "type", after: want.type },
        ...(want.type === "boolean" ? [] : [{ field: "variants", after: want.variants }]),
        ...(want.description === "" ? [] : [{ field: "description", after: want.description }]),
        ...(want.kind === "release" ? [] : [{ field: "kind", after: want.kind }]),
        ...(want.permanent ? [{ field: "permanent", after: true }] : []),
      ];
      steps.push({
        op: "create-flag",
        name: want.name,
        input,
        change: { object: "flag", action: "create", id: want.name, fields },
      });
      return;
    }
    if (have.type !== want.type) {
      throw invalid(`Flag "${want.name}" is ${have.type}: a flag's type does not change.`, [
        {
          path: `/flags/${index}/type`,
          message: `is "${want.type}", the flag is "${have.type}": create a flag of another name instead`,
        },
      ]);
    }
    const fields = [
      ...changed("description", have.description, want.description),
      ...changed("variants", have.variants, want.variants),
      ...changed("kind", have.kind, want.kind),
      ...changed("permanent", have.permanent, want.permanent),
    ];
    if (fields.length === 0) return;
    const input: { -readonly [K in keyof UpdateFlagInput]: UpdateFlagInput[K] } = {};
    for (const field of fields) {
      if (field.field !== "variants") (input as Record<string, unknown>)[field.field] = field.after;
    }
    if (fields.some((f) => f.field === "variants")) {
      // Variants the document drops that something names now stay until it stops naming them.
      const kept = new Set(want.variants.map((v) => v.key));
      const named = variantsNamed(current, want.name);
      const dropped = have.variants.filter((v) => !kept.has(v.key) && named.has(v.key));
      input.variants = [...want.variants, ...dropped] as UpdateFlagInput["variants"];
      if (dropped.length > 0) {
        finalVariants.push({
          op: "define-flag",
          name: want.name,
          input: { variants: want.variants as UpdateFlagInput["variants"] },
        });
      }
    }
    steps.push({
      op: "define-flag",
      name: want.name,
      input,
      change: { object: "flag", action: "update", id: want.name, fields },
    });
  });
  // Prerequisites the document removes go first, in their own writes, then the flags pruned, then those it
  // adds, a flag after those it requires: every graph on the way is then part of the document's, so no
  // write on the way finds a cycle or a chain deeper than the document's.
  const removals: Plan["steps"] = [];
  const rest: Plan["steps"] = [];
  for (const environment of desired.environments) {
    const approval = approvals.get(environment.id) === true;
    for (const want of prerequisiteOrder(desired.flags, environment.id)) {
      const configuration = want.environments[environment.id];
      // An environment the flag's entry leaves out keeps its configuration as it is.
      if (configuration === undefined) continue;
      const have = existing.get(want.name)?.environments[environment.id] ?? creationConfiguration(want);
      const step = planConfiguration(want.name, environment.id, have, configuration, approval);
      if (step === undefined) continue;
      const kept = new Set(configuration.prerequisites.map((p) => p.flag));
      const dropped = have.prerequisites.some((p) => !kept.has(p.flag));
      if (approval || !dropped) rest.push(step);
      else if (configuration.prerequisites.every((p) => have.prerequisites.some((h) => h.flag === p.flag))) {
        removals.push(step);
      } else {
        const prerequisites = have.prerequisites.filter((p) => kept.has(p.flag)) as UpdateFlagInput["prerequisites"];
        removals.push({
          op: "configure",
          name: want.name,
          environment: environment.id,
          input: { prerequisites },
          approval: false,
        });
        rest.push(step);
      }
    }
  }
  steps.push(...removals);
  // Pruned flags go before the prerequisites are added (their own may lengthen a chain) and before the
  // variants the document drops (they may require one).
  if (prune) {
    const wantedFlags = new Set(desired.flags.map((f) => f.name));
    for (const flag of current.flags) {
      if (wantedFlags.has(flag.name)) continue;
      steps.push({
        op: "delete-flag",
        name: flag.name,
        change: { object: "flag", action: "delete", id: flag.name, fields: [] },
      });
    }
  }
  steps.push(...rest, ...finalVariants);
  if (prune) {
    const wantedSegments = new Set(desired.segments.map((s) => s.id));
    for (const segment of current.segments) {
      if (wantedSegments.has(segment.id)) continue;
      steps.push({
        op: "delete-segment",
        id: segment.id,
        change: { object: "segment", action: "delete", id: segment.id, fields: [] },
      });
    }
  }
  return { steps, changes: steps.flatMap((s) => (s.change ? [s.change] : [])) };
}
