import type { Project } from "@flagstaff/sdk";
import type { Noun } from "../command.js";
import { type Column, record, table } from "../output.js";
import { PAGE_MAX } from "../lists.js";

const COLUMNS: Column<Project>[] = [
  ["ID", (p) => p.id],
  ["NAME", (p) => p.name],
  ["CREATED", (p) => p.createdAt],
];

const show = (p: Project) => record({ id: p.id, name: p.name, createdAt: p.createdAt });

export const projects: Noun = {
  name: "projects",
  summary: "Projects: the containers of flags, segments, actors and keys (admin key)",
  verbs: {
    list: {
      summary: "List every project",
      async run(ctx) {
        ctx.print(await ctx.client().projects.list({ limit: PAGE_MAX }).toArray(), (rows) => table(rows, COLUMNS));
      },
    },
    get: {
      args: "<id>",
      summary: "Show a project",
      async run(ctx) {
        ctx.print(await ctx.client().projects.get(ctx.arg(0)), show);
      },
    },
    create: {
      args: "<id>",
      summary: "Create a project",
      options: { name: { type: "string", value: "<name>", description: "Display name", required: true } },
      async run(ctx) {
        const name = ctx.required("name");
        ctx.print(await ctx.client().projects.create({ id: ctx.arg(0), name }), show);
      },
    },
    delete: {
      args: "<id>",
      summary: "Delete a project with all its flags, segments, actors and keys",
      async run(ctx) {
        await ctx.client().projects.delete(ctx.arg(0));
        ctx.done(`Deleted project ${ctx.arg(0)}.`);
      },
    },
  },
};
