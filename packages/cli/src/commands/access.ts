import { GRANT_ROLES, type Grant, type GrantRole } from "@flagstaff/sdk";
import type { Noun } from "../command.js";
import { type Column, record, table } from "../output.js";

const COLUMNS: Column<Grant>[] = [
  ["USER", (g) => g.userId],
  ["EMAIL", (g) => g.email],
  ["NAME", (g) => g.name],
  ["ROLE", (g) => g.role],
  ["SINCE", (g) => g.createdAt],
];

export const access: Noun = {
  name: "access",
  summary: "Who may work on a project: people's grants (the project's admins)",
  verbs: {
    list: {
      summary: "List the project's grants, by e-mail",
      async run(ctx) {
        const rows = await ctx.client().access.list(ctx.project());
        ctx.print(rows, (data) => table(data, COLUMNS, "No grants: only admins reach the project."));
      },
    },
    grant: {
      args: "<userId>",
      summary: "Grant a person a role on the project, or change it",
      options: {
        role: {
          type: "string",
          value: `<${GRANT_ROLES.join("|")}>`,
          // From the contract (GRANT_ROLES), as the server takes them.
          description: `${GRANT_ROLES.join(", ")}: everything on the project, its flags and segments, or reading it`,
          required: true,
        },
      },
      async run(ctx) {
        const granted = await ctx.client().access.grant(ctx.project(), ctx.arg(0), ctx.required("role") as GrantRole);
        ctx.print(granted, (g) =>
          record({ userId: g.userId, email: g.email, name: g.name, role: g.role, createdAt: g.createdAt }),
        );
      },
    },
    revoke: {
      args: "<userId>",
      summary: "Remove a person's grant on the project",
      async run(ctx) {
        await ctx.client().access.revoke(ctx.project(), ctx.arg(0));
        ctx.done(`Removed ${ctx.arg(0)}'s access to ${ctx.project()}.`);
      },
    },
  },
};
