import type { ApiKey, KeyRole } from "@flagstaff/sdk";
import type { Noun } from "../command.js";
import { type Column, record, table } from "../output.js";

const COLUMNS: Column<ApiKey>[] = [
  ["ID", (k) => k.id],
  ["NAME", (k) => k.name],
  ["ROLE", (k) => k.role],
  ["CREATED", (k) => k.createdAt],
];

/** How a new key's secret is shown: once, with the warning to store it. */
export function showSecret(key: { id: string; name: string; role: string; createdAt: string }, secret: string): string {
  return [
    record({ id: key.id, name: key.name, role: key.role, createdAt: key.createdAt }),
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
        const rows = await ctx.client().keys.list(ctx.project(), { limit: 100 }).toArray();
        ctx.print(rows, (data) => table(data, COLUMNS, "No keys."));
      },
    },
    create: {
      summary: "Create a key and print its secret once",
      options: {
        role: { type: "string", value: "check|read|write", description: "What the key may do", required: true },
        name: { type: "string", value: "<name>", description: "A label, e.g. where the key is used", required: true },
      },
      async run(ctx) {
        const role = ctx.required("role") as KeyRole;
        const name = ctx.required("name");
        const created = await ctx.client().keys.create(ctx.project(), { role, name });
        ctx.print(created, (k) => showSecret(k, k.key));
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
