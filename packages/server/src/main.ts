#!/usr/bin/env node
// The server's entry point: `npm start`, the `flagstaff-server` command and the Docker image's CMD. Without
// arguments it serves; `admin-key <create|list|revoke>` manages admin keys in the database instead.
import { destination, pino } from "pino";
import { buildApp } from "./app.js";
import { ConfigError, loadConfig } from "./kernel/config.js";
import { openDatabase } from "./db/database.js";
import { keepNextTickMapsAlive } from "./kernel/next-tick-maps.js";

const USAGE = `Usage: flagstaff-server                                  Serve (settings from environment variables)
       flagstaff-server admin-key <create|list|revoke>  Manage admin keys in the database (--help for more)

Settings: HOST, PORT, DATABASE_URL, ADMIN_API_KEY, LOG_LEVEL and more; see the README's Configuration.
`;

async function serve(): Promise<void> {
  // First, before the first full garbage collection can find no tick object alive: see next-tick-maps.ts.
  keepNextTickMapsAlive();
  const config = loadConfig();
  // The logger's own destination (as pino makes by default: standard output, asynchronous), kept so that the
  // admin-key box below is written through it, in order after the log lines before it.
  const output = destination({ dest: 1, minLength: 0 });
  const logger = pino({ level: config.logLevel }, output);
  const database = openDatabase(config, {
    onPoolError: (error) => logger.warn({ err: error }, "database connection lost"),
  });
  const service = await buildApp({ config, database, logger });

  if (service.generatedAdminKey !== undefined) {
    // Printed once, plainly, on standard output: only its hash is stored, so it cannot be shown again.
    process.stdout.write(
      `\nNo admin key existed, so one was created. It is shown this once; store it now:\n\n  ${service.generatedAdminKey}\n\n`,
    );
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing requests, flushing writes");
    service.close().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  const address = await service.app.listen({ host: config.host, port: config.port });
  logger.info({ address, database: config.dialect }, "flagstaff is serving");
  // Again, last, where it cannot have scrolled away yet: the first thing a newcomer needs from this output.
  if (service.generatedAdminKey !== undefined) output.write(adminKeyBox(service.generatedAdminKey, address));
}

/** The generated admin key in a box, with where to use it. */
function adminKeyBox(key: string, address: string): string {
  const lines = [
    "Your admin API key (shown at this start only; only its hash is stored):",
    "",
    `  ${key}`,
    "",
    `Use it as "Authorization: Bearer <key>" against ${address},`,
    `or sign in with it at ${address}/console/`,
  ];
  const width = Math.max(...lines.map((line) => line.length));
  const rule = "─".repeat(width + 2);
  return `\n┌${rule}┐\n${lines.map((line) => `│ ${line.padEnd(width)} │`).join("\n")}\n└${rule}┘\n\n`;
}

function startFailed(error: unknown): void {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(
      `Could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
}

const [command, ...rest] = process.argv.slice(2);
if (command === undefined) {
  serve().catch(startFailed);
} else if (command === "admin-key") {
  // Output piped into a command that stops reading early (`| head`) is not an error.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(process.exitCode ?? 0);
  });
  const { runAdminKeyCommand } = await import("./admin-key-command.js");
  const io = { env: process.env, stdout: process.stdout, stderr: process.stderr };
  process.exitCode = await runAdminKeyCommand(rest, io);
} else if (command === "--help" || command === "-h") {
  process.stdout.write(USAGE);
} else {
  process.stderr.write(`flagstaff-server: unknown command "${command}".\n\n${USAGE}`);
  process.exitCode = 2;
}
