import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type AppDeps, buildApp, type Service } from "../../src/app.js";
import type { Clock, RandomSource } from "../../src/clock.js";
import { type Config, type Dialect, loadConfig } from "../../src/config.js";
import { type DatabaseHandle, openDatabase } from "../../src/db/database.js";
import { assertConforms, forgetDocument, loadDocument } from "./openapi-conformance.js";

/** The dialects this run covers: SQLite always, PostgreSQL when scripts/test.mjs found one. */
export const DIALECTS = (process.env.TEST_DIALECTS ?? "sqlite").split(",") as Dialect[];
const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export const ADMIN_KEY = "test-admin-key-0123456789";

export interface FreshDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** A new, empty database: a file in a temporary folder, or a PostgreSQL database created for the caller. */
export async function freshDatabase(dialect: Dialect): Promise<FreshDatabase> {
  if (dialect === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "flagstaff-test-"));
    return { url: `file:${join(dir, "flags.db")}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `flagstaff_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  /** API key; defaults to the admin key. Pass null to send no Authorization header. */
  key?: string | null;
  body?: unknown;
  /** A raw body sent as it is (with no Content-Type unless given in headers). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /**
   * Check the answer against the server's OpenAPI document (default true; see openapi-conformance.ts).
   * Turn it off only for requests that are junk on purpose.
   */
  conformance?: boolean;
  /** Abort the request after this many milliseconds (default: no limit), so no test can hang on it. */
  timeoutMs?: number;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sends a request, insists on one status, and answers the body. */
export async function expectStatus<T = any>(
  status: number,
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const res = await httpRequest<T>(baseUrl, method, path, options);
  if (res.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${res.status} ${res.text}`);
  return res.body;
}

/** What a check answers, as a short string: "true", "false", or "<status> <code>" (2 s deadline). */
export async function checkState(
  baseUrl: string,
  project: string,
  flag: string,
  actors: readonly string[] = [],
  key?: string,
): Promise<string> {
  const query = actors.length === 0 ? "" : `?${actors.map((a) => `actorIds=${encodeURIComponent(a)}`).join("&")}`;
  const path = `/projects/${project}/flags/${encodeURIComponent(flag)}/check${query}`;
  const res = await httpRequest(baseUrl, "GET", path, { key, timeoutMs: 2000 });
  if (res.status === 200) return String(res.body.enabled);
  return `${res.status} ${res.body?.code ?? res.text}`;
}

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

/**
 * Sends one request over real HTTP and parses a JSON answer, which must conform to the server's OpenAPI
 * document (a ConformanceError is thrown otherwise) unless `conformance: false`.
 */
export async function httpRequest<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const key = options.key === undefined ? ADMIN_KEY : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const conformance = options.conformance !== false;
  // The document is fetched before the request, while the server surely answers (an answer may arrive as
  // it shuts down). A failure here is retried after the answer; a server that is down fails the request
  // itself, as it would without the check.
  const document = conformance ? await loadDocument(baseUrl).catch(() => undefined) : undefined;
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: body as BodyInit | undefined,
    signal: options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs),
  });
  const text = await response.text();
  let parsed: unknown = text;
  if (text !== "" && /json/.test(response.headers.get("content-type") ?? "")) parsed = JSON.parse(text);
  if (conformance) {
    const type = response.headers.get("content-type");
    await assertConforms(baseUrl, method, path, response.status, type, parsed, document);
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Starts a real server on 127.0.0.1 (random port) over a fresh database of the given dialect. */
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
  const service = await buildApp({
    config,
    database: handle,
    clock: options.clock,
    random: options.random,
    logger: options.logger ?? false,
  });
  const address = await service.app.listen({ host: "127.0.0.1", port: 0 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await service.close();
    // Another server may later listen on the same port, with another configuration.
    forgetDocument(address);
  };
  return {
    url: address,
    dialect: options.dialect,
    databaseUrl: database.url,
    service,
    config,
    database: handle,
    request: (method, path, requestOptions) => httpRequest(address, method, path, requestOptions),
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

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms = Date.parse("2026-11-22T10:00:00.000Z")) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** Asserts a response is RFC 9457 problem details with the given status and code. */
export function expectProblem(res: ApiResponse, status: number, code: string): void {
  const type = res.headers.get("content-type") ?? "";
  if (res.status !== status || !type.startsWith("application/problem+json") || res.body?.code !== code) {
    throw new Error(`expected ${status} ${code} as problem+json, got ${res.status} ${type} ${res.text}`);
  }
  if (res.body.status !== status || typeof res.body.title !== "string" || typeof res.body.detail !== "string") {
    throw new Error(`problem details incomplete: ${res.text}`);
  }
  if (res.body.type !== `urn:flagstaff:problem:${code}`) throw new Error(`problem type wrong: ${res.text}`);
}
