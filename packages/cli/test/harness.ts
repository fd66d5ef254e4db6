// The shared test harness (@flagstaff/test-harness), and a runner of the CLI in this process through its
// exported entry, run().
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import * as testHarness from "@flagstaff/test-harness";
import { run } from "../src/cli.js";

/** The shared test harness: startServer, DIALECTS, ADMIN_KEY, createProject, createKey. */
export const harness = testHarness;

export type { TestServer } from "@flagstaff/test-harness";

/** The real `flagstaff` command, for the one test that spawns it. */
export const BIN = fileURLToPath(new URL("../../bin/flagstaff.js", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `flagstaff` with these arguments in this process, with `env` as its whole environment (none of this
 * process's variables) and `stdin` as its standard input, and collects what it writes.
 */
export async function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  stdin = "",
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const io = {
    env: { ...env },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    readStdin: async () => stdin,
  };
  const code = await run(args, io);
  return { code, stdout, stderr };
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
