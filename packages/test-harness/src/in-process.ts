import { randomBytes } from "node:crypto";
import { type AppDeps, buildApp, type Service } from "@flagstaff/server/dist/src/app.js";
import type { Clock, RandomSource } from "@flagstaff/server/dist/src/kernel/clock.js";
import { type Config, type Dialect, loadConfig } from "@flagstaff/server/dist/src/kernel/config.js";
import { type DatabaseHandle, openDatabase } from "@flagstaff/server/dist/src/db/database.js";
import { track } from "./cleanup.js";
import { type FreshDatabase, freshDatabase } from "./database.js";
import { ADMIN_KEY, type ApiResponse, httpRequest, type RequestOptions } from "./http.js";
import { forgetDocument } from "./openapi-conformance.js";
import { withDeadline } from "./wait.js";

/** How long stopping a server may take (it finishes requests in flight and flushes) before it counts as stuck. */
const STOP_DEADLINE_MS = 15_000;

export interface TestServer {
  readonly url: string;
  readonly dialect: Dialect;
  readonly databaseUrl: string;
  readonly service: Service;
  readonly config: Config;
  /** The server's own database handle: for reading stored rows directly, or closing it to cut the database. */
  readonly database: DatabaseHandle;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** Stops the server (flushing like a SIGTERM would) and keeps the database. */
  stop(): Promise<void>;
  /** Stops the server and drops its database. */
  close(): Promise<void>;
}

export interface StartOptions {
  dialect: Dialect;
  /** Reuse a database (e.g. to restart on the same data); a fresh one is made otherwise. */
  database?: FreshDatabase;
  env?: Record<string, string>;
  clock?: Clock;
  random?: RandomSource;
  /** A pino logger to log through (silence by default). */
  logger?: AppDeps["logger"];
}

/** Starts a real server in this process on 127.0.0.1 (a random port, or env.PORT) over a fresh database of the given dialect. */
export async function startServer(options: StartOptions): Promise<TestServer> {
  const database = options.database ?? (await freshDatabase(options.dialect));
  const config = loadConfig({
    DATABASE_URL: database.url,
    ADMIN_API_KEY: ADMIN_KEY,
    PORT: "0",
    LOG_LEVEL: "silent",
    ...(options.env ?? {}),
  });
  const handle = openDatabase(config);
  let untrack = () => {};
  let stopping: Promise<void> | undefined;
  let address: string | undefined;
  const starting = (async () => {
    const service = await buildApp({
      config,
      database: handle,
      clock: options.clock,
      random: options.random,
      logger: options.logger ?? false,
    });
    try {
      // PORT 0 (the default here): any free port. A test may reserve one (freePort) and pass PORT when the
      // server must know its own address before it starts (PUBLIC_URL, a provider's redirect URI).
      address = await service.app.listen({ host: "127.0.0.1", port: config.port });
    } catch (error) {
      await service.close();
      throw error;
    }
    return service;
  })();
  const stop = () => {
    stopping ??= (async () => {
      const service = await starting.catch(async () => {
        await handle.close().catch(() => {});
        return undefined;
      });
      await service?.close();
      // Another server may later listen on the same port, with another configuration.
      if (address !== undefined) forgetDocument(address);
      untrack();
    })();
    return withDeadline(stopping, STOP_DEADLINE_MS, `stopping the server on ${address ?? "(not listening yet)"}`);
  };
  // Tracked before the first await: a test that times out while the server starts still gets it stopped.
  untrack = track({ label: `server in this process over ${database.url}`, dispose: stop });
  const service = await starting.catch(async (error: unknown) => {
    await stop().catch(() => {});
    throw error;
  });
  const url = address as string;
  return {
    url,
    dialect: options.dialect,
    databaseUrl: database.url,
    service,
    config,
    database: handle,
    request: (method, path, requestOptions) => httpRequest(url, method, path, requestOptions),
    stop,
    close: async () => {
      await stop();
      await database.drop();
    },
  };
}

/** Creates a project (as admin) and answers its id. */
export async function createProject(server: TestServer, id = `p-${randomBytes(4).toString("hex")}`): Promise<string> {
  const res = await server.request("POST", "/projects", { body: { id, name: `Project ${id}` } });
  if (res.status !== 201) throw new Error(`could not create project ${id}: ${res.status} ${res.text}`);
  return id;
}

/** Creates an API key of a role in a project (as admin) and answers its secret and id. */
export async function createKey(
  server: TestServer,
  projectId: string,
  role: "write" | "read" | "check",
): Promise<{ key: string; id: string }> {
  const res = await server.request("POST", `/projects/${projectId}/keys`, { body: { role, name: `${role} key` } });
  if (res.status !== 201) throw new Error(`could not create key: ${res.status} ${res.text}`);
  return { key: res.body.key, id: res.body.id };
}
