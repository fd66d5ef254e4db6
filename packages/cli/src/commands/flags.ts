import type { Flag, Percentage, UpdateFlagInput } from "@flagstaff/sdk";
import type { Command, Context, Noun } from "../command.js";
import { clip, type Column, record, table } from "../output.js";
import { SEGMENT_COLUMNS } from "./segments.js";

const COLUMNS: Column<Flag>[] = [
  ["NAME", (f) => f.name],
  ["STATUS", (f) => f.status],
  ["ACTORS %", (f) => String(f.percentageActors)],
  ["CALLS %", (f) => String(f.percentageCalls)],
  ["DESCRIPTION", (f) => clip(f.description)],
  ["LAST CHECKED", (f) => f.latestCheckedAt ?? "never"],
];

/** A flag's configuration in each environment the key may see, one line: `production: enabled, 25 %, 5 %`. */
const configurations = (f: Flag) =>
  Object.entries(f.environments ?? {})
    .map(([id, c]) => `${id}: ${c.status}, ${c.percentageActors} %, ${c.percentageCalls} %`)
    .join("; ");

const show = (f: Flag) =>
  record({
    name: f.name,
    id: f.id,
    projectId: f.projectId,
    environment: f.environment,
    status: f.status,
    percentageActors: f.percentageActors,
    percentageCalls: f.percentageCalls,
    description: f.description,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
    statusChangedAt: f.statusChangedAt,
    latestCheckedAt: f.latestCheckedAt,
    environments: configurations(f),
  });

async function update(ctx: Context, input: UpdateFlagInput): Promise<void> {
  ctx.print(await ctx.client().flags.update(ctx.project(), ctx.arg(0), input), show);
}

/** A PATCH of the flag named by the first argument, built from the command line. */
function updating(args: string, summary: string, input: (ctx: Context) => UpdateFlagInput): Command {
  return { args, summary, run: (ctx) => update(ctx, input(ctx)) };
}

export const flags: Noun = {
  name: "flags",
  summary: "Flags of a project, in one environment (--environment): create, target, roll out, copy to another",
  verbs: {
    list: {
      summary: "List the project's flags by name",
      options: {
        name: { type: "string", value: "<text>", description: "Only flags whose name contains this text" },
        q: { type: "string", value: "<text>", description: "Only flags whose name or description contains this text" },
      },
      async run(ctx) {
        const options = { name: ctx.string("name"), q: ctx.string("q"), limit: 100 };
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
      summary: "Create a flag (disabled, at 0 %)",
      options: { description: { type: "string", value: "<text>", description: "What the flag is for" } },
      async run(ctx) {
        const description = ctx.string("description");
        ctx.print(await ctx.client().flags.create(ctx.project(), ctx.arg(0), { description }), show);
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
    enable: updating("<name>", "Turn a flag on for everyone", () => ({ status: "enabled" })),
    disable: updating("<name>", "Turn a flag off for everyone", () => ({ status: "disabled" })),
    conditional: updating("<name>", "Turn a flag on by its targeting rules", () => ({ status: "conditional" })),
    set: {
      args: "<name>",
      summary: "Change a flag's rollout percentages or description",
      options: {
        "actors-percent": {
          type: "string",
          value: "<n>",
          description: "Sticky share of actors: 0, 1, 2, 5, 10, 25, 50, 75 or 100",
        },
        "calls-percent": {
          type: "string",
          value: "<n>",
          description: "Random share of checks: 0, 1, 2, 5, 10, 25, 50, 75 or 100",
        },
        description: { type: "string", value: "<text>", description: "New description" },
      },
      run(ctx) {
        const input: UpdateFlagInput = {
          percentageActors: ctx.integer("actors-percent") as Percentage | undefined,
          percentageCalls: ctx.integer("calls-percent") as Percentage | undefined,
          description: ctx.string("description"),
        };
        if (Object.values(input).every((v) => v === undefined)) {
          throw ctx.usage("Nothing to change: pass --actors-percent, --calls-percent or --description.");
        }
        return update(ctx, input);
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
      summary: "Copy a flag's status, percentages, actors and segments to another environment",
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
        ctx.print(await ctx.client().flags.copy(ctx.project(), ctx.arg(0), input), show);
      },
    },
    segments: {
      args: "<name>",
      summary: "List the segments attached to a flag",
      async run(ctx) {
        const rows = await ctx.client().segments.listForFlag(ctx.project(), ctx.arg(0), { limit: 100 }).toArray();
        ctx.print(rows, (data) => table(data, SEGMENT_COLUMNS, "No segments attached."));
      },
    },
  },
};
