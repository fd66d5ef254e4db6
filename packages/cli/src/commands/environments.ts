import type { Environment, UpdateEnvironmentInput } from "@flagstaff/sdk";
import type { Noun } from "../command.js";
import { clip, type Column, record, table } from "../output.js";
import { PAGE_MAX } from "../lists.js";

const COLUMNS: Column<Environment>[] = [
  ["ID", (e) => e.id],
  ["NAME", (e) => e.name],
  ["DEFAULT", (e) => (e.default ? "yes" : "")],
  ["PROTECTED", (e) => (e.protected ? "yes" : "")],
  ["APPROVALS", (e) => (e.requiredApprovals > 0 ? String(e.requiredApprovals) : "")],
  ["DESCRIPTION", (e) => clip(e.description)],
  ["CREATED", (e) => e.createdAt],
];

const show = (e: Environment) =>
  record({
    id: e.id,
    name: e.name,
    description: e.description,
    default: e.default,
    protected: e.protected,
    requiredApprovals: e.requiredApprovals,
    allowSelfApproval: e.allowSelfApproval,
    projectId: e.projectId,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  });

const PROTECTED = "Only the project's admins change what it serves (its configurations, deleting flags)";

export const environments: Noun = {
  name: "environments",
  summary: "Environments of a project: each holds its own configuration of every flag (changes: admin key)",
  verbs: {
    list: {
      summary: "List the project's environments in their order",
      async run(ctx) {
        const rows = await ctx.client().environments.list(ctx.project(), { limit: PAGE_MAX }).toArray();
        ctx.print(rows, (data) => table(data, COLUMNS, "No environments."));
      },
    },
    get: {
      args: "<id>",
      summary: "Show an environment",
      async run(ctx) {
        ctx.print(await ctx.client().environments.get(ctx.project(), ctx.arg(0)), show);
      },
    },
    create: {
      args: "<id>",
      summary: "Create an environment (every flag disabled, or as in --copy-from)",
      options: {
        name: { type: "string", value: "<name>", description: "Display name", required: true },
        description: { type: "string", value: "<text>", description: "What the environment is for" },
        "copy-from": {
          type: "string",
          value: "<id>",
          description: "An environment whose configuration of every flag the new one starts with",
        },
        protected: { type: "boolean", description: PROTECTED },
      },
      async run(ctx) {
        const input = {
          id: ctx.arg(0),
          name: ctx.required("name"),
          description: ctx.string("description"),
          copyFrom: ctx.string("copy-from"),
          protected: ctx.toggle("protected"),
        };
        ctx.print(await ctx.client().environments.create(ctx.project(), input), show);
      },
    },
    update: {
      args: "<id>",
      summary: "Rename or describe an environment, make it the default, or protect it (or not)",
      options: {
        name: { type: "string", value: "<name>", description: "New display name" },
        description: { type: "string", value: "<text>", description: "New description" },
        default: { type: "boolean", description: "Make it the default (the previous default stops being it)" },
        protected: { type: "boolean", description: `${PROTECTED}; --no-protected: anyone who may write` },
        approvals: {
          type: "string",
          value: "<0-5>",
          description: "Approvals a change request needs here; above 0, direct changes to flags are refused",
        },
        "self-approval": {
          type: "boolean",
          description: "Authors may approve their own change requests (--no-self-approval: they may not)",
        },
      },
      async run(ctx) {
        const input: UpdateEnvironmentInput = {
          name: ctx.string("name"),
          description: ctx.string("description"),
          default: ctx.boolean("default") ? true : undefined,
          protected: ctx.toggle("protected"),
          requiredApprovals: ctx.integer("approvals"),
          allowSelfApproval: ctx.toggle("self-approval"),
        };
        if (Object.values(input).every((v) => v === undefined)) {
          throw ctx.usage(
            "Nothing to change: pass --name, --description, --default, --protected, --no-protected, --approvals or --(no-)self-approval.",
          );
        }
        ctx.print(await ctx.client().environments.update(ctx.project(), ctx.arg(0), input), show);
      },
    },
    delete: {
      args: "<id>",
      summary: "Delete an environment and its flag configurations; revokes its keys",
      async run(ctx) {
        await ctx.client().environments.delete(ctx.project(), ctx.arg(0));
        ctx.done(`Deleted environment ${ctx.arg(0)}.`);
      },
    },
  },
};
