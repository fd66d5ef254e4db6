import { type UpdateUserInput, type User, USER_ROLES, type UserRole } from "@flagstaff/sdk";
import type { Context, Noun } from "../command.js";
import { type Column, record, table } from "../output.js";
import { PAGE_MAX } from "../lists.js";

const COLUMNS: Column<User>[] = [
  ["ID", (u) => u.id],
  ["EMAIL", (u) => u.email],
  ["NAME", (u) => u.name],
  ["ROLE", (u) => u.role],
  ["DISABLED", (u) => (u.disabled ? "yes" : "")],
  ["PASSWORD", (u) => (u.hasPassword ? "yes" : "")],
  ["LAST SIGN-IN", (u) => u.lastSignInAt ?? "never"],
];

const show = (u: User) =>
  record({
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    disabled: u.disabled,
    hasPassword: u.hasPassword,
    createdAt: u.createdAt,
    lastSignInAt: u.lastSignInAt,
  });

/** A person's role, from the contract's list (USER_ROLES): the words help shows and the server takes. */
const ROLE = {
  type: "string",
  value: `<${USER_ROLES.join("|")}>`,
  description: `${USER_ROLES.join(" or ")}: an admin may do everything, people included; a member only what grants give`,
} as const;

const PASSWORD_STDIN = {
  type: "boolean",
  description: "Read a password from standard input, never from an argument (where shells keep it)",
} as const;

function role(ctx: Context): UserRole | undefined {
  return ctx.string("role") as UserRole | undefined;
}

export const users: Noun = {
  name: "users",
  summary: "People who sign in to the console, and their roles (admins: an admin key or an admin's key)",
  verbs: {
    list: {
      summary: "List people, oldest first",
      async run(ctx) {
        const rows = await ctx.client().users.list({ limit: PAGE_MAX }).toArray();
        ctx.print(rows, (data) => table(data, COLUMNS, "No people."));
      },
    },
    get: {
      args: "<userId>",
      summary: "Show a person",
      async run(ctx) {
        ctx.print(await ctx.client().users.get(ctx.arg(0)), show);
      },
    },
    create: {
      summary: "Add a person (a member unless --role admin); with --password-stdin, with a password",
      options: {
        email: { type: "string", value: "<e-mail>", description: "Their e-mail address", required: true },
        name: { type: "string", value: "<name>", description: "Their name", required: true },
        role: { ...ROLE, description: `${ROLE.description} (default member)` },
        "password-stdin": PASSWORD_STDIN,
      },
      async run(ctx) {
        const password = ctx.boolean("password-stdin") ? await ctx.passwordFromStdin() : undefined;
        const input = { email: ctx.required("email"), name: ctx.required("name"), role: role(ctx), password };
        ctx.print(await ctx.client().users.create(input), show);
      },
    },
    update: {
      args: "<userId>",
      summary: "Rename a person, change their role, disable or enable them, set or remove their password",
      options: {
        name: { type: "string", value: "<name>", description: "New name" },
        role: ROLE,
        disabled: {
          type: "boolean",
          description: "Disable them (their sessions and personal keys stop at once); --no-disabled: enable",
        },
        "password-stdin": {
          ...PASSWORD_STDIN,
          description: `${PASSWORD_STDIN.description}; signs them out everywhere`,
        },
        "remove-password": { type: "boolean", description: "Remove their password (single sign-on only then)" },
      },
      async run(ctx) {
        if (ctx.boolean("password-stdin") && ctx.boolean("remove-password")) {
          throw ctx.usage("--password-stdin and --remove-password exclude each other.");
        }
        const input: UpdateUserInput = {
          name: ctx.string("name"),
          role: role(ctx),
          disabled: ctx.toggle("disabled"),
          password: ctx.boolean("remove-password")
            ? null
            : ctx.boolean("password-stdin")
              ? await ctx.passwordFromStdin()
              : undefined,
        };
        if (Object.values(input).every((v) => v === undefined)) {
          throw ctx.usage(
            "Nothing to change: pass --name, --role, --disabled, --no-disabled, --password-stdin or --remove-password.",
          );
        }
        ctx.print(await ctx.client().users.update(ctx.arg(0), input), show);
      },
    },
    delete: {
      args: "<userId>",
      summary: "Delete a person with their grants, sessions and personal keys (their history stays)",
      async run(ctx) {
        await ctx.client().users.delete(ctx.arg(0));
        ctx.done(`Deleted person ${ctx.arg(0)}.`);
      },
    },
  },
};
