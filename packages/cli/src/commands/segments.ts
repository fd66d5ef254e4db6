import type { ConditionInput, Segment, UpdateSegmentInput } from "@flagstaff/sdk";
import type { Command, Context, Noun, Options } from "../command.js";
import { clip, type Column, record, table } from "../output.js";
import { PAGE_MAX } from "../lists.js";

const actorIds = (s: Segment) => s.latestActors.map((a) => a.actorId).join(", ");

export const SEGMENT_COLUMNS: Column<Segment>[] = [
  ["ID", (s) => s.id],
  ["NAME", (s) => s.name],
  ["DESCRIPTION", (s) => clip(s.description)],
  ["LATEST ACTORS", (s) => clip(actorIds(s))],
];

/** A segment's conditions, one line: `plan in ["pro"] and not country in ["DE"]`. */
const conditionsLine = (s: Segment) =>
  (s.conditions ?? [])
    .map(
      (c) =>
        `${c.negate ? "not " : ""}${c.attribute ?? ""} ${c.operator}${c.caseInsensitive ? " (any case)" : ""} ${JSON.stringify(c.values)}`,
    )
    .join(" and ") || "-";

const show = (s: Segment) =>
  record({
    id: s.id,
    name: s.name,
    description: s.description,
    createdAt: s.createdAt,
    latestActors: actorIds(s) || "-",
    conditions: conditionsLine(s),
  });

const CONDITION_OPTIONS: Options = {
  conditions: {
    type: "string",
    value: "<json>",
    description:
      'Rule-based membership, all must hold ([]: listed members only): \'[{"attribute":"plan","operator":"in","values":["pro"]}]\'',
  },
  "conditions-file": { type: "string", value: "<path>", description: "The conditions, from a JSON file" },
};

/** A command that changes the segment its first argument names (with what `input` reads) and shows it. */
function updating(
  args: string,
  summary: string,
  input: (ctx: Context) => UpdateSegmentInput | Promise<UpdateSegmentInput>,
  options?: Options,
): Command {
  return {
    args,
    summary,
    options,
    async run(ctx) {
      ctx.print(await ctx.client().segments.update(ctx.project(), ctx.arg(0), await input(ctx)), show);
    },
  };
}

export const segments: Noun = {
  name: "segments",
  summary: "Segments of a project: named lists of actors, and conditions on attributes",
  verbs: {
    list: {
      summary: "List the project's segments by name",
      async run(ctx) {
        const rows = await ctx.client().segments.list(ctx.project(), { limit: PAGE_MAX }).toArray();
        ctx.print(rows, (data) => table(data, SEGMENT_COLUMNS, "No segments."));
      },
    },
    get: {
      args: "<id>",
      summary: "Show a segment with its 10 latest actors",
      async run(ctx) {
        ctx.print(await ctx.client().segments.get(ctx.project(), ctx.arg(0)), show);
      },
    },
    create: {
      summary: "Create a segment and print its id",
      options: {
        name: { type: "string", value: "<name>", description: "Name, unique in the project", required: true },
        description: { type: "string", value: "<text>", description: "What the segment is" },
        ...CONDITION_OPTIONS,
      },
      async run(ctx) {
        const input = {
          name: ctx.required("name"),
          description: ctx.string("description"),
          conditions: await ctx.jsonOrFile<ConditionInput[]>("conditions"),
        };
        ctx.print(await ctx.client().segments.create(ctx.project(), input), show);
      },
    },
    update: updating(
      "<id>",
      "Rename a segment, change its description, or replace its conditions",
      async (ctx) => {
        const input = {
          name: ctx.string("name"),
          description: ctx.string("description"),
          conditions: await ctx.jsonOrFile<ConditionInput[]>("conditions"),
        };
        if (Object.values(input).every((v) => v === undefined)) {
          throw ctx.usage("Nothing to change: pass --name, --description or --conditions(-file).");
        }
        return input;
      },
      {
        name: { type: "string", value: "<name>", description: "New name" },
        description: { type: "string", value: "<text>", description: "New description" },
        ...CONDITION_OPTIONS,
      },
    ),
    "add-actors": updating("<id> <actor...>", "Add actors to a segment", (ctx) => ({ addActors: ctx.args.slice(1) })),
    "remove-actors": updating("<id> <actor...>", "Remove actors from a segment", (ctx) => ({
      removeActors: ctx.args.slice(1),
    })),
    delete: {
      args: "<id>",
      summary: "Delete a segment and detach it from every flag",
      async run(ctx) {
        await ctx.client().segments.delete(ctx.project(), ctx.arg(0));
        ctx.done(`Deleted segment ${ctx.arg(0)}.`);
      },
    },
  },
};
