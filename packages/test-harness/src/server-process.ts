// Real server processes: `node main.js` spawned with an environment, talked to over HTTP, stopped with
// signals. Each is tracked from the moment it is spawned (cleanup.ts); every wait has a deadline.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { track } from "./cleanup.js";
import { type ApiResponse, httpRequest, type RequestOptions } from "./http.js";
import { freePort } from "./ports.js";
import { waitFor, withDeadline } from "./wait.js";

/** The server's compiled entry point, as the workspace installs it. */
export const SERVER_MAIN = fileURLToPath(import.meta.resolve("@flagstaff/server/dist/src/main.js"));

/**
 * Variables the server reads, and those that would make the child act as part of this test run: a child
 * never inherits them from the test run, it only gets what a test gives.
 */
const NOT_INHERITED = [
  "DATABASE_URL",
  "ADMIN_API_KEY",
  "PORT",
  "HOST",
  "LOG_LEVEL",
  "CHECK_FLUSH_INTERVAL_MS",
  "FEED_POLL_INTERVAL_MS",
  "RATE_LIMIT_PER_MINUTE",
  "METRICS_PUBLIC",
  "DATABASE_POOL_SIZE",
  "REQUEST_TIMEOUT_MS",
  "HEADERS_TIMEOUT_MS",
  "CORS_ALLOWED_ORIGINS",
  "NODE_TEST_CONTEXT",
  "NODE_OPTIONS",
];

/** How long a process has between SIGTERM and SIGKILL when the harness cleans up after a test. */
const CLEANUP_GRACE_MS = 3000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnOptions {
  /**
   * The server's variables; undefined removes one. HOST=127.0.0.1, PORT (a free port) and LOG_LEVEL=warn
   * are set unless given.
   */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

export interface LaunchOptions extends SpawnOptions {
  /** How long the server may take to answer /healthz (default 30 s). */
  readyTimeoutMs?: number;
}

export class ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  stdout = "";
  stderr = "";
  exit: Exit | undefined;
  readonly closed: Promise<Exit>;
  /** Aborted when the process ends: waits on it stop at once. */
  private readonly ended = new AbortController();

  constructor(
    env: NodeJS.ProcessEnv,
    readonly port: number,
    cwd: string | undefined,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.child = spawn(process.execPath, [SERVER_MAIN], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    const untrack = track({
      label: `server process ${this.url} (pid ${this.child.pid})`,
      dispose: async () => {
        await this.stop("SIGTERM", CLEANUP_GRACE_MS).catch(() => {});
      },
      killNow: () => {
        if (this.running) this.child.kill("SIGKILL");
      },
    });
    this.child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stdout += chunk;
    });
    this.child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.closed = new Promise<Exit>((resolve) => {
      const done = (exit: Exit) => {
        if (this.exit !== undefined) return;
        this.exit = exit;
        untrack();
        this.ended.abort(new Error(`server exited (${JSON.stringify(exit)})${this.describe()}`));
        resolve(exit);
      };
      this.child.once("close", (code, signal) => done({ code, signal }));
      this.child.once("error", (error) => {
        this.stderr += `\n[spawn error] ${error.message}`;
        done({ code: null, signal: null });
      });
    });
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return httpRequest<T>(this.url, method, path, options);
  }

  /** The tail of both outputs, to append to failure messages. */
  describe(): string {
    return `\n--- stdout ---\n${this.stdout.slice(-4000)}\n--- stderr ---\n${this.stderr.slice(-4000)}`;
  }

  /** Waits for the process to end; past the deadline it is killed with SIGKILL and this throws. */
  async waitExit(ms = 15_000): Promise<Exit> {
    if (this.exit !== undefined) return this.exit;
    try {
      return await withDeadline(this.closed, ms, `server process ${this.child.pid}`);
    } catch {
      await this.kill();
      throw new Error(`server did not exit within ${ms} ms; killed with SIGKILL${this.describe()}`);
    }
  }

  /** Sends a signal and waits for the exit (SIGKILL after the deadline, and this throws). */
  async stop(signal: NodeJS.Signals = "SIGTERM", ms = 15_000): Promise<Exit> {
    if (this.running) this.child.kill(signal);
    return this.waitExit(ms);
  }

  /** SIGKILL, whatever state it is in. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGKILL");
    await withDeadline(this.closed, 5000, `server process ${this.child.pid} after SIGKILL`).catch(() => {});
  }

  /** Polls GET /healthz until 200; throws (after killing it) when the process exits or the deadline passes. */
  async waitReady(ms = 30_000): Promise<void> {
    try {
      await waitFor(
        `server ${this.url} to answer /healthz`,
        () => this.request("GET", "/healthz", { key: null, timeoutMs: 2000, conformance: false }),
        { until: (res) => res.status === 200, timeoutMs: ms, intervalMs: 50, signal: this.ended.signal },
      );
    } catch (error) {
      if (this.running) await this.kill();
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`server was not ready: ${reason}${this.running ? this.describe() : ""}`);
    }
  }

  /** Waits until the output shows the pattern (the pipe may lag behind the HTTP answers). */
  async waitForOutput(pattern: RegExp, ms = 10_000): Promise<RegExpMatchArray> {
    const match = await waitFor(`output matching ${pattern}`, () => this.stdout.match(pattern), {
      timeoutMs: ms,
      intervalMs: 25,
      signal: this.ended.signal,
    }).catch((error: Error) => {
      // The process may have written it just before it ended.
      const late = this.stdout.match(pattern);
      if (late) return late;
      throw new Error(`${error.message}${this.describe()}`);
    });
    return match as RegExpMatchArray;
  }
}

/** Spawns `node main.js` on a free port, without waiting for it. */
export async function spawnServer(options: SpawnOptions = {}): Promise<ServerProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of NOT_INHERITED) delete env[name];
  env.PORT = String(port);
  env.HOST = "127.0.0.1";
  env.LOG_LEVEL = "warn";
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return new ServerProcess(env, port, options.cwd);
}

/** Spawns a server and waits until it answers /healthz. */
export async function launchServer(options: LaunchOptions = {}): Promise<ServerProcess> {
  const server = await spawnServer(options);
  await server.waitReady(options.readyTimeoutMs);
  return server;
}
