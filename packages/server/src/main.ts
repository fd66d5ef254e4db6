#!/usr/bin/env node
import { pino } from "pino";
import { buildApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { openDatabase } from "./db/database.js";

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: config.logLevel });
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
}

main().catch((error) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(
      `Could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
