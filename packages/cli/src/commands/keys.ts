import { type ApiKey, type KeyRole, PROJECT_ROLES } from "@flagstaff/sdk";
import type { Noun } from "../command.js";
import { type Column, record, table } from "../output.js";
import { PAGE_MAX } from "../lists.js";

const COLUMNS: Column<ApiKey>[] = [
  ["ID", (k) => k.id],
  ["NAME", (k) => k.name],
  ["ROLE", (k) => k.role],
  ["ENVIRONMENT", (k) => k.environment ?? "(none)"],
  ["CREATED", (k) => k.createdAt],
];

/** How a new key's secret is shown: once, with the warning to store it. */
export function showSecret(key: Omit<ApiKey, "projectId">, secret: string): string {
  const environment = key.environment ?? "(none)";
  return [
    record({ id: key.id, name: key.name, role: key.role, environment, createdAt: key.createdAt }),
    "",
    "Store this key now. It is shown this once and cannot be retrieved again:",
    "",
    `  ${secret}`,
  ].join("\n");
}

export const keys: Noun = {
  name: "keys",
  summary: "API keys of a project (admin key; admin keys themselves: flagstaff-server admin-key)",
  verbs: {
    list: {
      summary: "List the project's keys, oldest first (never their secrets)",
      async run(ctx) {
        const rows = await ctx.client().keys.list(ctx.project(), { limit: PAGE_MAX }).toArray();
        ctx.print(rows, (data) => table(data, COLUMNS, "No keys."));
      },
    },
    create: {
      summary: "Create a key bound to an environment and print its secret once",
      options: {
        role: {
          type: "string",
          value: [...PROJECT_ROLES].reverse().join("|"),
          description: "What the key may do",
          required: true,
        },
        name: { type: "string", value: "<name>", description: "A label, e.g. where the key is used", required: true },
        unbound: { type: "boolean", description: "A write key bound to no environment: it may name any" },
      },
      async run(ctx) {
        const role = ctx.required("role") as KeyRole;
        const name = ctx.required("name");
        let environment: string | null | undefined = ctx.environment();
        if (ctx.boolean("unbound")) {
          if (ctx.string("environment") !== undefined)
            throw ctx.usage("--unbound and --environment exclude each other.");
          environment = null;
        }
        const created = await ctx.client().keys.create(ctx.project(), { role, name, environment });
        ctx.print(created, (k) => showSecret(k, k.key));
      },
    },
    rename: {
      args: "<keyId>",
      summary: "Rename a key (the history names its later changes so)",
      options: { name: { type: "string", value: "<name>", description: "The new name", required: true } },
      async run(ctx) {
        const renamed = await ctx.client().keys.rename(ctx.project(), ctx.arg(0), ctx.required("name"));
        ctx.print(renamed, (k) =>
          record({
            id: k.id,
            name: k.name,
            role: k.role,
            environment: k.environment ?? "(none)",
            createdAt: k.createdAt,
          }),
        );
      },
    },
    revoke: {
      args: "<keyId>",
      summary: "Revoke a key at once",
      async run(ctx) {
        await ctx.client().keys.revoke(ctx.project(), ctx.arg(0));
        ctx.done(`Revoked key ${ctx.arg(0)}.`);
      },
    },
  },
};
