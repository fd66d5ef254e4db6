// The shared test harness (@flagstaff/test-harness), and a runner of the real, built CLI as a child process.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import * as testHarness from "@flagstaff/test-harness";

/** The shared test harness: startServer, DIALECTS, ADMIN_KEY, createProject, createKey. */
export const harness = testHarness;

export type { TestServer } from "@flagstaff/test-harness";

const MAIN = fileURLToPath(new URL("../src/main.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `flagstaff` with these arguments. The environment is this process's without any FLAGSTAFF_* or
 * DATABASE_URL variable, plus `env`. Asynchronous on purpose: the server under test runs in this process.
 */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("FLAGSTAFF_") && name !== "DATABASE_URL"),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...base, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Asserts the exit code, showing the output when it differs. */
export function expectExit(result: CliResult, code: number, why = ""): CliResult {
  const output = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  assert.equal(result.code, code, `expected exit code ${code}${why ? ` (${why})` : ""}; ${output}`);
  return result;
}

/** A port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP server that accepts connections and never answers; close() ends it. */
export async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
