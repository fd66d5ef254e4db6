// Admin keys cannot be managed over the API, so these commands work on the database directly, through the
// server package's own code: config parsing, connection, migrations and its KeyService. Each write records
// a change set on the global stream exactly as the server does, so running servers apply it: at once on
// PostgreSQL (NOTIFY), within FEED_POLL_INTERVAL_MS on SQLite.
import { existsSync } from "node:fs";
import type { DatabaseHandle } from "@flagstaff/server/dist/src/db/database.js";
import type { Context, Noun, Options } from "../command.js";
import { CliError, EXIT } from "../errors.js";
import { type Column, table } from "../output.js";
import { showSecret } from "./keys.js";

/** An admin key as the server's KeyService lists it. */
interface AdminKey {
  id: string;
  name: string;
  createdAt: string;
}

const COLUMNS: Column<AdminKey>[] = [
  ["ID", (k) => k.id],
  ["NAME", (k) => k.name],
  ["CREATED", (k) => k.createdAt],
];

const DATABASE: Options = {
  "database-url": {
    type: "string",
    value: "<url>",
    description: "The server's DATABASE_URL: file:<path> or postgres://… (env DATABASE_URL)",
  },
};

/** The server's modules, loaded only for these commands (they bring the database drivers). */
async function serverModules() {
  const [config, database, migrate, keys, errors] = await Promise.all([
    import("@flagstaff/server/dist/src/config.js"),
    import("@flagstaff/server/dist/src/db/database.js"),
    import("@flagstaff/server/dist/src/db/migrate.js"),
    import("@flagstaff/server/dist/src/features/keys/admin-keys.js"),
    import("@flagstaff/server/dist/src/errors.js"),
  ]);
  return { ...config, ...database, ...migrate, ...keys, ...errors };
}
type Server = Awaited<ReturnType<typeof serverModules>>;

/** An error and its causes, outermost first (migration errors wrap the driver's). */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < 5; e = (e as { cause?: unknown }).cause) {
    chain.push(e);
  }
  return chain;
}

/** Opens the database named by --database-url, brings its schema up to date, runs `work`, closes it. */
async function withDatabase<T>(ctx: Context, work: (handle: DatabaseHandle, server: Server) => Promise<T>) {
  const url = ctx.string("database-url") ?? (process.env.DATABASE_URL || undefined);
  if (url === undefined) throw ctx.usage("--database-url is required (or set DATABASE_URL).");
  const server = await serverModules();
  let config: ReturnType<Server["loadConfig"]>;
  try {
    config = server.loadConfig({ DATABASE_URL: url, DATABASE_POOL_SIZE: "2", LOG_LEVEL: "silent" });
  } catch (error) {
    throw ctx.usage((error as Error).message);
  }
  if (config.dialect === "sqlite" && !existsSync(config.databaseLocation)) {
    const where = config.databaseLocation;
    throw new CliError(EXIT.notFound, "database_not_found", `No database file at ${where}; check --database-url.`);
  }
  const handle = server.openDatabase(config);
  try {
    // A wrong URL must not get a Flagstaff schema (and an admin key) of its own: only a database that a
    // server has set up is used; migrating then only brings it up to this version, as a server start would.
    const tables = await handle.db.introspection.getTables();
    if (!tables.some((t) => t.name === "api_keys")) {
      throw new CliError(
        EXIT.notFound,
        "database_not_found",
        "No server has set up this database; check --database-url.",
      );
    }
    await server.migrateToLatest(handle);
    return await work(handle, server);
  } catch (error) {
    if (error instanceof CliError) throw error;
    const chain = causes(error);
    const driverCode = chain.map((e) => (e as { code?: unknown }).code).find((c) => typeof c === "string");
    const reason =
      chain
        .map((e) => (e instanceof Error ? e.message : ""))
        .filter((m) => m !== "")
        .pop() ?? "";
    if (driverCode === "3D000") throw new CliError(EXIT.notFound, "database_not_found", reason);
    if (typeof driverCode === "string" && driverCode.startsWith("28")) {
      throw new CliError(EXIT.auth, "unauthorized", `The database refused the login: ${reason}`);
    }
    if (chain.some((e) => server.classifyDatabaseError(e) !== undefined)) {
      throw new CliError(EXIT.unavailable, "unavailable", `The database does not answer: ${reason}`);
    }
    throw error;
  } finally {
    await handle.close();
  }
}

export const adminKey: Noun = {
  name: "admin-key",
  summary: "Admin keys, straight in the database (no server or key needed): recovery and rotation",
  verbs: {
    create: {
      summary: "Create an admin key in the database and print it once",
      options: {
        ...DATABASE,
        name: { type: "string", value: "<name>", description: 'A label (default "created with flagstaff admin-key")' },
      },
      async run(ctx) {
        const name = ctx.string("name") ?? "created with flagstaff admin-key";
        if (name.length < 1 || [...name].length > 128) throw ctx.usage("--name must be 1–128 characters.");
        // The server's own KeyService records the change as a server would, so running instances see it.
        const created = await withDatabase(ctx, (handle, server) =>
          server.offlineKeyService(handle).createAdminKey(name),
        );
        ctx.print(created, (k) => showSecret(k, k.key));
      },
    },
    list: {
      summary: "List the admin keys (never their secrets)",
      options: DATABASE,
      async run(ctx) {
        const keys = await withDatabase(ctx, (handle, server) => server.offlineKeyService(handle).listAdminKeys());
        ctx.print(keys, (data) => table(data, COLUMNS, "No admin keys."));
      },
    },
    revoke: {
      args: "<keyId>",
      summary: "Revoke an admin key in the database",
      options: DATABASE,
      async run(ctx) {
        const keyId = ctx.arg(0);
        const left = await withDatabase(ctx, async (handle, server) => {
          const keys = server.offlineKeyService(handle);
          try {
            await keys.revokeAdminKey(keyId);
          } catch (error) {
            if (error instanceof server.AppError && error.code === "key_not_found") {
              throw new CliError(EXIT.notFound, "key_not_found", `No admin key with id "${keyId}".`);
            }
            throw error;
          }
          return (await keys.listAdminKeys()).length;
        });
        ctx.done(`Revoked admin key ${keyId}.`);
        if (left === 0) {
          process.stderr.write(
            "No admin key is left. Create one with `flagstaff admin-key create`; a server started without " +
              "ADMIN_API_KEY also creates one.\n",
          );
        }
      },
    },
  },
};
