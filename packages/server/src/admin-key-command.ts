// `flagstaff-server admin-key create|list|revoke`: admin keys straight in the database. The HTTP API cannot
// manage admin keys, and this needs no running server and no key, so it is also the way back in when every
// admin key is lost. It reads DATABASE_URL as the server does (with the same default), and each write records a change set on the
// global stream exactly as the server's own writes do, so running servers apply it: at once on PostgreSQL
// (NOTIFY), within FEED_POLL_INTERVAL_MS on SQLite.
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import Table from "cli-table3";
import { isEmail, NAME_MAX_LENGTH } from "@flagstaff/core";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "@flagstaff/core/schemas";
import { type Config, loadConfig } from "./kernel/config.js";
import { classifyDatabaseError, type DatabaseHandle, openDatabase } from "./db/database.js";
import { migrateToLatest } from "./db/migrate.js";
import { AppError } from "./kernel/errors.js";
import { ADMIN_KEY_COMMAND } from "./write-path/domain-events.js";
import { offlineKeyService, offlinePeople } from "./modules/admin-keys.js";

/** Something text is written to: process.stdout, or a test's collector. */
export interface Writer {
  write(text: string): unknown;
}

/** Where the command reads DATABASE_URL and writes its output: the process's, or a test's. */
export interface CommandIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: Writer;
  readonly stderr: Writer;
  /** Reads all of standard input (for --password-stdin). */
  readonly readStdin?: () => Promise<string>;
}

/** The exit codes of `admin-key`; the same numbers as the `flagstaff` CLI's for the same kinds of failure. */
export const EXIT = { ok: 0, unexpected: 1, usage: 2, notFound: 3, auth: 4, unavailable: 7 } as const;

const COMMAND = "flagstaff-server admin-key";
const DEFAULT_NAME = "created with flagstaff-server admin-key";

export const ADMIN_KEY_HELP = `Usage: ${COMMAND} <create|list|rename|revoke> [options]
       npm run admin-key -- <create|list|rename|revoke> [options]     (in the repository)

Admin keys, straight in the database: no running server and no key needed. This is how to recover when
every admin key is lost, and how to rotate them. Running servers follow each change: at once on
PostgreSQL, within FEED_POLL_INTERVAL_MS on SQLite.

Subcommands:
  create [--name <name>]  Create an admin key and print it once (default name "${DEFAULT_NAME}")
  list                    List the admin keys (never their secrets)
  rename <keyId> --name <name>
                          Rename an admin key (the first one is "generated at first start"); the history
                          names its later changes so
  revoke <keyId>          Revoke an admin key
  user create --email <e-mail> [--name <name>] [--admin] [--password-stdin]
                          Add a person (a member, or an admin with --admin). Prints a one-time sign-in
                          link, good for 24 hours (PUBLIC_URL names the server in it): it signs them in
                          once, on their Me page, where they set a password (or they use single sign-on);
                          with --password-stdin, reads their password from standard input and sets it instead

Options:
  --database-url <url>  The server's database: file:<path> or postgres://… (default: DATABASE_URL, else the
                        server's default, file:./data/flags.db)
  --json                Print JSON; errors as problem JSON on stderr
  -h, --help            Show this help

The database must be one a server has already set up: a mistyped URL fails, and no database is created.

Exit codes:
  0  success
  1  unexpected error
  2  usage error: unknown subcommand or option, missing or malformed argument
  3  not found: no database at that URL, no database a server has set up, or no such admin key
  4  the database refused the login
  7  the database does not answer
`;

/** A failure with the exit code and problem code it stands for. */
class CommandError extends Error {
  constructor(
    readonly exitCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "CommandError";
  }
}

const usage = (message: string) => new CommandError(EXIT.usage, "usage", message);

const OPTIONS = {
  "database-url": { type: "string" },
  name: { type: "string" },
  email: { type: "string" },
  admin: { type: "boolean" },
  "password-stdin": { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

interface AdminKey {
  id: string;
  name: string;
  role: string;
  createdAt: string;
}

const PLAIN = { head: [], border: [] };

function keyTable(keys: readonly AdminKey[]): string {
  if (keys.length === 0) return "No admin keys.";
  const table = new Table({ head: ["ID", "NAME", "CREATED"], style: PLAIN });
  for (const key of keys) table.push([key.id, key.name, key.createdAt]);
  return table.toString();
}

function showSecret(key: AdminKey, secret: string): string {
  const table = new Table({ style: PLAIN });
  const fields = { id: key.id, name: key.name, role: key.role, createdAt: key.createdAt };
  for (const [field, value] of Object.entries(fields)) table.push({ [field]: value });
  return [
    table.toString(),
    "",
    "Store this key now. It is shown this once and cannot be retrieved again:",
    "",
    `  ${secret}`,
  ].join("\n");
}

const line = (out: Writer, text: string) => out.write(text.endsWith("\n") ? text : `${text}\n`);

/** An error and its causes, outermost first (migration errors wrap the driver's). */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < 5; e = (e as { cause?: unknown }).cause) {
    chain.push(e);
  }
  return chain;
}

/** Opens the database at `url` (the server's default without one), brings its schema up to date, runs `work`. */
async function withDatabase<T>(url: string | undefined, work: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  if (url === "") throw usage("--database-url must not be empty.");
  let config: Config;
  try {
    config = loadConfig({ DATABASE_URL: url, DATABASE_POOL_SIZE: "2", LOG_LEVEL: "silent" });
  } catch (error) {
    throw usage((error as Error).message);
  }
  if (config.dialect === "sqlite" && !existsSync(config.databaseLocation)) {
    const where = config.databaseLocation;
    throw new CommandError(EXIT.notFound, "database_not_found", `No database file at ${where}; check --database-url.`);
  }
  const handle = openDatabase(config);
  try {
    // A wrong URL must not get a Flagstaff schema (and an admin key) of its own: only a database that a
    // server has set up is used; migrating then only brings it up to this version, as a server start would.
    const tables = await handle.db.introspection.getTables();
    if (!tables.some((t) => t.name === "api_keys")) {
      throw new CommandError(
        EXIT.notFound,
        "database_not_found",
        "No server has set up this database; check --database-url.",
      );
    }
    await migrateToLatest(handle);
    return await work(handle);
  } catch (error) {
    if (error instanceof CommandError) throw error;
    const chain = causes(error);
    const driverCode = chain.map((e) => (e as { code?: unknown }).code).find((c) => typeof c === "string");
    const reason =
      chain
        .map((e) => (e instanceof Error ? e.message : ""))
        .filter((m) => m !== "")
        .pop() ?? "";
    if (driverCode === "3D000") throw new CommandError(EXIT.notFound, "database_not_found", reason);
    if (typeof driverCode === "string" && driverCode.startsWith("28")) {
      throw new CommandError(EXIT.auth, "unauthorized", `The database refused the login: ${reason}`);
    }
    if (chain.some((e) => classifyDatabaseError(e) !== undefined)) {
      throw new CommandError(EXIT.unavailable, "unavailable", `The database does not answer: ${reason}`);
    }
    throw error;
  } finally {
    await handle.close();
  }
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) throw usage((error as Error).message);
    throw error;
  }
}

async function dispatch(argv: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parse(argv);
  if (values.help) {
    line(io.stdout, ADMIN_KEY_HELP);
    return EXIT.ok;
  }
  const [verb, ...args] = positionals;
  if (verb === undefined) {
    io.stderr.write(ADMIN_KEY_HELP);
    return EXIT.usage;
  }
  const url = values["database-url"] ?? (io.env.DATABASE_URL || undefined);
  const print = <T>(data: T, render: (data: T) => string) =>
    line(io.stdout, values.json ? JSON.stringify(data, null, 2) : render(data));
  const expectArgs = (count: number, shape: string) => {
    if (args.length !== count) throw usage(`Wrong number of arguments: expected ${COMMAND} ${verb}${shape}.`);
  };
  if (verb !== "create" && verb !== "rename" && verb !== "user" && values.name !== undefined)
    throw usage(`--name is an option of create, rename and user create, not of ${verb}.`);
  if (verb !== "user" && (values.email !== undefined || values.admin || values["password-stdin"]))
    throw usage(`--email, --admin and --password-stdin are options of user create, not of ${verb}.`);

  switch (verb) {
    case "create": {
      expectArgs(0, " [--name <name>]");
      const name = values.name ?? DEFAULT_NAME;
      if (name.length < 1 || [...name].length > NAME_MAX_LENGTH) {
        throw usage(`--name must be 1–${NAME_MAX_LENGTH} characters.`);
      }
      // The server's own KeyService records the change as a server would, so running instances see it.
      const created = await withDatabase(url, (handle) =>
        offlineKeyService(handle).createAdminKey(ADMIN_KEY_COMMAND, name),
      );
      print(created, (key) => showSecret(key, key.key));
      return EXIT.ok;
    }
    case "list": {
      expectArgs(0, "");
      const keys = await withDatabase(url, (handle) => offlineKeyService(handle).listAdminKeys());
      print(keys, keyTable);
      return EXIT.ok;
    }
    case "rename": {
      expectArgs(1, " <keyId> --name <name>");
      const keyId = args[0] as string;
      const name = values.name;
      if (name === undefined) throw usage(`--name is required: ${COMMAND} rename <keyId> --name <name>.`);
      if (name.length < 1 || [...name].length > NAME_MAX_LENGTH) {
        throw usage(`--name must be 1–${NAME_MAX_LENGTH} characters.`);
      }
      const renamed = await withDatabase(url, async (handle) => {
        try {
          return await offlineKeyService(handle).rename(ADMIN_KEY_COMMAND, null, keyId, { name });
        } catch (error) {
          if (error instanceof AppError && error.code === "key_not_found") {
            throw new CommandError(EXIT.notFound, "key_not_found", `No admin key with id "${keyId}".`);
          }
          throw error;
        }
      });
      print(renamed, (key) => `Renamed admin key ${key.id} to "${key.name}".`);
      return EXIT.ok;
    }
    case "revoke": {
      expectArgs(1, " <keyId>");
      const keyId = args[0] as string;
      const left = await withDatabase(url, async (handle) => {
        const keys = offlineKeyService(handle);
        try {
          await keys.revokeAdminKey(ADMIN_KEY_COMMAND, keyId);
        } catch (error) {
          if (error instanceof AppError && error.code === "key_not_found") {
            throw new CommandError(EXIT.notFound, "key_not_found", `No admin key with id "${keyId}".`);
          }
          throw error;
        }
        return (await keys.listAdminKeys()).length;
      });
      if (!values.json) line(io.stdout, `Revoked admin key ${keyId}.`);
      if (left === 0) {
        io.stderr.write(
          `No admin key is left. Create one with \`${COMMAND} create\`; a server started without ` +
            "ADMIN_API_KEY also creates one.\n",
        );
      }
      return EXIT.ok;
    }
    case "user": {
      if (args[0] !== "create" || args.length !== 1) {
        throw usage(`Expected ${COMMAND} user create --email <e-mail> [--name <name>] [--admin] [--password-stdin].`);
      }
      const email = values.email;
      if (!isEmail(email)) {
        throw usage("--email must be an e-mail address.");
      }
      const name = values.name ?? email.slice(0, email.indexOf("@"));
      if (name.length < 1 || [...name].length > NAME_MAX_LENGTH)
        throw usage(`--name must be 1–${NAME_MAX_LENGTH} characters.`);
      let password: string | undefined;
      if (values["password-stdin"]) {
        password = (await (io.readStdin ?? readProcessStdin)()).replace(/\r?\n$/, "");
        if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
          throw usage(`The password must be ${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters.`);
        }
      }
      const role = values.admin ? "admin" : "member";
      const { user, token } = await withDatabase(url, async (handle) => {
        const { people, signIn } = offlinePeople(handle);
        try {
          const user = await people.create(ADMIN_KEY_COMMAND, {
            email,
            name,
            role,
            ...(password === undefined ? {} : { password }),
          });
          return { user, token: password === undefined ? await signIn.createLink(user.id) : undefined };
        } catch (error) {
          if (error instanceof AppError && error.code === "user_exists") {
            throw new CommandError(EXIT.usage, "user_exists", error.detail);
          }
          throw error;
        }
      });
      const base = io.env.PUBLIC_URL?.replace(/\/+$/, "") ?? "";
      const link = token === undefined ? undefined : `${base}/auth/link?token=${token}`;
      print({ ...user, ...(link === undefined ? {} : { signInLink: link }) }, () =>
        [
          `Added ${user.role} ${user.name} <${user.email}> (${user.id}).`,
          ...(link === undefined
            ? ["They sign in with the password given."]
            : [
                "",
                "A one-time sign-in link, good for 24 hours; send it to them privately:",
                "",
                `  ${link}`,
                ...(base === "" ? ["", "(PUBLIC_URL is unset: put the server's address in front of it.)"] : []),
                "",
                "They open it and are signed in to the console, on their Me page. The link works once: there they",
                "set a password to sign in with next time (or they sign in with single sign-on, where it is set up).",
              ]),
        ].join("\n"),
      );
      return EXIT.ok;
    }
    default:
      throw usage(`Unknown subcommand "${verb}": create, list, rename, revoke or user create.`);
  }
}

/** Writes the error to stderr (problem JSON with `json`) and answers its exit code. */
function report(error: unknown, json: boolean, stderr: Writer): number {
  const known = error instanceof CommandError;
  const exitCode = known ? error.exitCode : EXIT.unexpected;
  const code = known ? error.code : "unexpected";
  const detail = error instanceof Error ? error.message : String(error);
  if (json) {
    const problem = { type: `urn:flagstaff:problem:${code}`, status: 0, detail, code };
    stderr.write(`${JSON.stringify(problem, null, 2)}\n`);
  } else if (!known) {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    stderr.write(`${COMMAND}: unexpected error: ${text}\n`);
  } else {
    const hint = exitCode === EXIT.usage ? `\nRun "${COMMAND} --help" for usage.` : "";
    stderr.write(`${COMMAND}: ${detail}${hint}\n`);
  }
  return exitCode;
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Runs `admin-key` on `argv` (the words after it) and answers the exit code; it never exits the process. */
export async function runAdminKeyCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const end = argv.indexOf("--");
  const json = (end === -1 ? argv : argv.slice(0, end)).includes("--json");
  try {
    return await dispatch(argv, io);
  } catch (error) {
    return report(error, json, io.stderr);
  }
}
