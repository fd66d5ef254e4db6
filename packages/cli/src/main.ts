// The `flagstaff` command (bin/flagstaff.js imports this): runs the CLI on this process's arguments.
import { processIo, run } from "./cli.js";

// Output piped into a command that stops reading early (`| head`) is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});

process.exitCode = await run(process.argv.slice(2), processIo());
