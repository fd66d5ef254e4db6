import {
  ALLOWED_PERCENTAGES,
  type CreateFlagInput,
  type Flag,
  type FlagExplanation,
  type FlagKind,
  FLAG_KINDS,
  type UsageSeries,
  USAGE_STEPS,
  type UsageStep,
  type FlagType,
  type Percentage,
  type PrerequisiteInput,
  type RuleInput,
  type UpdateFlagInput,
  type VariantInput,
  FLAG_TYPES,
  VARIANTS_MAX,
  VARIANTS_MIN,
} from "@flagstaff/sdk";
import { type Command, type Context, contextOptions, type Noun, type Options } from "../command.js";
import { alternatives, clip, type Column, record, table } from "../output.js";
import { SEGMENT_COLUMNS } from "./segments.js";
import { PAGE_MAX } from "../lists.js";

/** The contract's flag types that declare variants: all but the first, boolean (its are on and off). */
const TYPED = FLAG_TYPES.slice(1);

const COLUMNS: Column<Flag>[] = [
  ["NAME", (f) => f.name],
  ["STATUS", (f) => f.status],
  ["ACTORS %", (f) => String(f.percentageActors)],
  ["CALLS %", (f) => String(f.percentageCalls)],
  ["DESCRIPTION", (f) => clip(f.description)],
  ["LAST CHECKED", (f) => f.latestCheckedAt ?? "never"],
  ["STALE", (f) => (f.staleReason === null ? "-" : f.staleReason)],
];

/** What a flag is for and whether it stays, as create and set take them. */
const LIFECYCLE_OPTIONS: Options = {
  kind: { type: "string", value: "<kind>", description: `What the flag is for: ${FLAG_KINDS.join(", ")}` },
  permanent: { type: "boolean", description: "Meant to stay, never stale (--no-permanent: not)" },
};

/** A usage series as a table: a line per bucket with evaluations, a column per variant. */
function usageText(series: UsageSeries): string {
  const variants = Object.keys(series.totals);
  if (variants.length === 0) return `No evaluations in ${series.environment} from ${series.from} to ${series.to}.`;
  const rows = series.points.filter((p) => Object.keys(p.evaluations).length > 0);
  const columns: Column<(typeof rows)[number]>[] = [
    [series.step.toUpperCase(), (p) => p.at],
    ...variants.map((v): Column<(typeof rows)[number]> => [v.toUpperCase(), (p) => String(p.evaluations[v] ?? 0)]),
  ];
  const totals = variants.map((v) => `${v} ${series.totals[v]}`).join(", ");
  return `${table(rows, columns, "")}\nIn ${series.environment}, ${series.from} to ${series.to}: ${totals}.`;
}

/** A flag's configuration in each environment the key may see, one line: `production: enabled, 25 %, 5 %`. */
const configurations = (f: Flag) =>
  Object.entries(f.environments ?? {})
    .map(([id, c]) => `${id}: ${c.status}, ${c.percentageActors} %, ${c.percentageCalls} %`)
    .join("; ");

/** A value as one line of JSON, clipped for a table. */
const compact = (value: unknown, max = 200) => clip(JSON.stringify(value) ?? "null", max);

/** A flag's variants, one line: `light="light", dark="dark"`. */
const variantsLine = (f: Flag) => (f.variants ?? []).map((v) => `${v.key}=${compact(v.value, 60)}`).join(", ");

/** A flag's rules, one line each: `1. nordics: country in ["NO","SE"] → dark`. */
const rulesText = (f: Flag) =>
  (f.rules ?? []).length === 0
    ? "-"
    : (f.rules ?? [])
        .map((rule, i) => {
          const conditions = rule.conditions
            .map(
              (c) =>
                `${c.negate ? "not " : ""}${c.attribute === undefined ? "" : `${c.attribute} `}${c.operator}${c.caseInsensitive ? " (any case)" : ""} ${compact(c.values, 80)}`,
            )
            .join(" and ");
          const serve =
            "variant" in rule.serve
              ? rule.serve.variant
              : `split ${rule.serve.split.weights.map((w) => `${w.variant} ${w.weight} %`).join(", ")}${rule.serve.split.bucketBy ? ` by ${rule.serve.split.bucketBy}` : ""}`;
          return `${i + 1}. ${rule.id}: ${conditions || "always"} → ${serve}`;
        })
        .join("\n");

const prerequisitesLine = (f: Flag) =>
  (f.prerequisites ?? []).map((p) => `${p.flag} in ${p.variants.join("|")}`).join("; ") || "-";

const show = (f: Flag) =>
  record({
    name: f.name,
    id: f.id,
    projectId: f.projectId,
    environment: f.environment,
    type: f.type,
    variants: variantsLine(f),
    onVariant: f.onVariant,
    offVariant: f.offVariant,
    status: f.status,
    percentageActors: f.percentageActors,
    percentageCalls: f.percentageCalls,
    description: f.description,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
    statusChangedAt: f.statusChangedAt,
    latestCheckedAt: f.latestCheckedAt,
    environments: configurations(f),
    rules: rulesText(f),
    prerequisites: prerequisitesLine(f),
    kind: f.kind,
    permanent: f.permanent,
    stale: f.staleReason === null ? "no" : `${f.staleReason} (since ${f.staleSince})`,
    archived: f.archivedAt ?? "no",
  });

/** The options of the targeting a flag's update writes (in the chosen environment, but `variants`). */
const TARGETING_OPTIONS: Options = {
  variants: {
    type: "string",
    value: "<json>",
    description:
      'Replace the variants (not a boolean flag\'s), e.g. \'[{"key":"a","value":"x"},{"key":"b","value":"y"}]\'',
  },
  "on-variant": { type: "string", value: "<key>", description: "The variant enabled, targeting and rollouts serve" },
  "off-variant": { type: "string", value: "<key>", description: "The variant disabled and the default serve" },
  rules: {
    type: "string",
    value: "<json>",
    description:
      'Replace the rules, in order: [{"id","conditions":[{"attribute","operator","values"}],"serve":{"variant"}}]',
  },
  "rules-file": { type: "string", value: "<path>", description: "Replace the rules with those of a JSON file" },
  prerequisites: {
    type: "string",
    value: "<json>",
    description: 'Replace the prerequisites: [{"flag":"other","variants":["on"]}]',
  },
  "prerequisites-file": {
    type: "string",
    value: "<path>",
    description: "Replace the prerequisites with those of a JSON file",
  },
};

/** The targeting part of an update, from TARGETING_OPTIONS. */
async function targetingInput(ctx: Context): Promise<UpdateFlagInput> {
  return {
    variants: ctx.jsonOption<VariantInput[]>("variants"),
    onVariant: ctx.string("on-variant"),
    offVariant: ctx.string("off-variant"),
    rules: await ctx.jsonOrFile<RuleInput[]>("rules"),
    prerequisites: await ctx.jsonOrFile<PrerequisiteInput[]>("prerequisites"),
  };
}

/** The text of an explanation: the answer, then why. */
function explanationText(e: FlagExplanation): string {
  const why =
    e.rule === "rule" && e.matchedRule
      ? `rule ${e.matchedRule.index + 1} (${e.matchedRule.id})`
      : e.rule === "prerequisite"
        ? `prerequisite ${e.prerequisite} failed`
        : e.rule === "segment" && e.segment
          ? `segment ${e.segment.name} (${e.segment.id})`
          : e.rule === "actor" && e.actorId
            ? `actor ${e.actorId} is attached`
            : e.rule;
  return record({
    enabled: e.enabled,
    variant: e.variant,
    value: e.value === undefined ? null : compact(e.value),
    reason: e.reason,
    decidedBy: why,
    conditions: e.rule === "rule" && e.matchedRule ? compact(e.matchedRule.conditions) : null,
    actors:
      e.actors.map((a) => `${a.actorId} (bucket ${a.bucket}${a.inRollout ? ", in rollout" : ""})`).join(", ") || null,
  });
}

async function update(ctx: Context, input: UpdateFlagInput): Promise<void> {
  ctx.print(await ctx.client().flags.update(ctx.project(), ctx.arg(0), input), show);
}

/** A PATCH of the flag named by the first argument, built from the command line. */
function updating(args: string, summary: string, input: (ctx: Context) => UpdateFlagInput): Command {
  return { args, summary, run: (ctx) => update(ctx, input(ctx)) };
}

const setCommand: Command = {
  args: "<name>",
  summary: "Change a flag's rollout percentages, description, variants, rules or prerequisites",
  options: {
    "actors-percent": {
      type: "string",
      value: "<n>",
      description: `Sticky share of actors: ${ALLOWED_PERCENTAGES.join(", ")}`,
    },
    "calls-percent": {
      type: "string",
      value: "<n>",
      description: `Random share of checks: ${ALLOWED_PERCENTAGES.join(", ")}`,
    },
    description: { type: "string", value: "<text>", description: "New description" },
    ...TARGETING_OPTIONS,
    ...LIFECYCLE_OPTIONS,
    comment: { type: "string", value: "<text>", description: "Why: recorded with the change in the history" },
  },
  async run(ctx) {
    const comment = ctx.string("comment");
    const input: UpdateFlagInput = {
      percentageActors: ctx.integer("actors-percent") as Percentage | undefined,
      percentageCalls: ctx.integer("calls-percent") as Percentage | undefined,
      description: ctx.string("description"),
      ...(await targetingInput(ctx)),
      kind: ctx.string("kind") as FlagKind | undefined,
      permanent: ctx.toggle("permanent"),
    };
    if (Object.values(input).every((v) => v === undefined)) {
      throw ctx.usage(
        "Nothing to change: pass --actors-percent, --calls-percent, --description, --variants, --on-variant, --off-variant, --rules(-file), --prerequisites(-file), --kind or --(no-)permanent.",
      );
    }
    return update(ctx, comment === undefined ? input : { ...input, comment });
  },
};

export const flags: Noun = {
  name: "flags",
  summary: "Flags of a project, in one environment (--environment): create, target, roll out, copy to another",
  verbs: {
    list: {
      summary: "List the project's flags by name",
      options: {
        name: { type: "string", value: "<text>", description: "Only flags whose name contains this text" },
        q: { type: "string", value: "<text>", description: "Only flags whose name or description contains this text" },
        kind: { type: "string", value: "<kind>", description: `Only flags of this kind: ${FLAG_KINDS.join(", ")}` },
        stale: { type: "boolean", description: "Only stale flags (--no-stale: only those that are not)" },
        archived: { type: "boolean", description: "Only archived flags (left out otherwise)" },
      },
      async run(ctx) {
        const options = {
          name: ctx.string("name"),
          q: ctx.string("q"),
          kind: ctx.string("kind") as FlagKind | undefined,
          stale: ctx.toggle("stale"),
          archived: ctx.toggle("archived"),
          limit: PAGE_MAX,
        };
        const rows = await ctx.client().flags.list(ctx.project(), options).toArray();
        ctx.print(rows, (data) => table(data, COLUMNS, "No flags."));
      },
    },
    get: {
      args: "<name>",
      summary: "Show a flag",
      async run(ctx) {
        ctx.print(await ctx.client().flags.get(ctx.project(), ctx.arg(0)), show);
      },
    },
    create: {
      args: "<name>",
      summary: `Create a flag (disabled, at 0 %): ${FLAG_TYPES[0]}, or ${alternatives(TYPED)} with its variants`,
      options: {
        description: { type: "string", value: "<text>", description: "What the flag is for" },
        type: {
          type: "string",
          value: "<type>",
          description: `${FLAG_TYPES.join(", ")} (default ${FLAG_TYPES[0]}); fixed for the flag's life`,
        },
        variants: {
          type: "string",
          value: "<json>",
          description: `The variants of a ${alternatives(TYPED)} flag (${VARIANTS_MIN}–${VARIANTS_MAX}): '[{"key":"a","value":"x"},…]'`,
        },
        "on-variant": { type: "string", value: "<key>", description: "The variant served when on (default the first)" },
        "off-variant": {
          type: "string",
          value: "<key>",
          description: "The variant served when off (default the second)",
        },
        ...LIFECYCLE_OPTIONS,
      },
      async run(ctx) {
        const input: CreateFlagInput = {
          description: ctx.string("description"),
          type: ctx.string("type") as FlagType | undefined,
          variants: ctx.jsonOption<VariantInput[]>("variants"),
          onVariant: ctx.string("on-variant"),
          offVariant: ctx.string("off-variant"),
          kind: ctx.string("kind") as FlagKind | undefined,
          permanent: ctx.toggle("permanent"),
        };
        ctx.print(await ctx.client().flags.create(ctx.project(), ctx.arg(0), input), show);
      },
    },
    delete: {
      args: "<name>",
      summary: "Delete a flag",
      async run(ctx) {
        await ctx.client().flags.delete(ctx.project(), ctx.arg(0));
        ctx.done(`Deleted flag ${ctx.arg(0)}.`);
      },
    },
    archive: {
      args: "<name>",
      summary: "Archive a flag: every environment answers it as not found; its configuration, history and name stay",
      async run(ctx) {
        ctx.print(await ctx.client().flags.archive(ctx.project(), ctx.arg(0)), (f) => `Archived flag ${f.name}.`);
      },
    },
    restore: {
      args: "<name>",
      summary: "Restore an archived flag as it was, in every environment",
      async run(ctx) {
        ctx.print(await ctx.client().flags.restore(ctx.project(), ctx.arg(0)), (f) => `Restored flag ${f.name}.`);
      },
    },
    usage: {
      args: "<name>",
      summary: "A flag's evaluations over time, per variant, in the environment",
      options: {
        step: { type: "string", value: "<step>", description: `${USAGE_STEPS.join(", ")} (default hour)` },
        from: { type: "string", value: "<time>", description: "ISO 8601 start (default: a day back for hours)" },
        to: { type: "string", value: "<time>", description: "ISO 8601 end (default now)" },
      },
      async run(ctx) {
        const range = {
          step: ctx.string("step") as UsageStep | undefined,
          from: ctx.string("from"),
          to: ctx.string("to"),
        };
        ctx.print(await ctx.client().flags.usage(ctx.project(), ctx.arg(0), range), usageText);
      },
    },
    enable: updating("<name>", "Turn a flag on for everyone", () => ({ status: "enabled" })),
    disable: updating("<name>", "Turn a flag off for everyone", () => ({ status: "disabled" })),
    conditional: updating("<name>", "Turn a flag on by its targeting rules", () => ({ status: "conditional" })),
    set: setCommand,
    update: setCommand,
    explain: {
      args: "<name>",
      summary:
        "Explain a flag's answer for actors and attributes: the variant, and the rule or prerequisite that decided",
      options: contextOptions(),
      async run(ctx) {
        const context = ctx.evaluationContext();
        ctx.print(await ctx.client().flags.explain(ctx.project(), ctx.arg(0), context), explanationText);
      },
    },
    "add-actors": updating("<name> <actor...>", "Attach actors to a flag", (ctx) => ({
      addActors: ctx.args.slice(1),
    })),
    "remove-actors": updating("<name> <actor...>", "Detach actors from a flag", (ctx) => ({
      removeActors: ctx.args.slice(1),
    })),
    "add-segments": updating("<name> <segmentId...>", "Attach segments to a flag", (ctx) => ({
      addSegments: ctx.args.slice(1),
    })),
    "remove-segments": updating("<name> <segmentId...>", "Detach segments from a flag", (ctx) => ({
      removeSegments: ctx.args.slice(1),
    })),
    copy: {
      args: "<name>",
      summary:
        "Copy a flag's status, percentages, actors, segments, on/off variants, rules and prerequisites to another environment",
      options: {
        from: { type: "string", value: "<environment>", description: "The environment to copy from", required: true },
        to: {
          type: "string",
          value: "<environment>",
          description: "The environment whose configuration is replaced",
          required: true,
        },
      },
      async run(ctx) {
        const input = { from: ctx.required("from"), to: ctx.required("to") };
        const [project, name] = [ctx.project(), ctx.arg(0)];
        // The target's ETag before and after: a copy that changes nothing leaves it as it was. (A refused
        // read is left to the copy, whose refusal says why.)
        const before = await ctx
          .clientIn(input.to)
          .flags.getWithETag(project, name)
          .then((tagged) => tagged.etag)
          .catch(() => undefined);
        const copied = await ctx.client().flags.copyWithETag(project, name, input);
        const unchanged = before === copied.etag;
        ctx.print(copied.value, (flag) =>
          [
            unchanged
              ? `Nothing changed: ${name} in ${input.to} was already configured as in ${input.from}.`
              : `Copied ${name}'s configuration from ${input.from} to ${input.to}.`,
            show(flag),
          ].join("\n"),
        );
      },
    },
    segments: {
      args: "<name>",
      summary: "List the segments attached to a flag",
      async run(ctx) {
        const rows = await ctx.client().segments.listForFlag(ctx.project(), ctx.arg(0), { limit: PAGE_MAX }).toArray();
        ctx.print(rows, (data) => table(data, SEGMENT_COLUMNS, "No segments attached."));
      },
    },
  },
};
