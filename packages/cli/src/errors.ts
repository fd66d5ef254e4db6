import { FlagstaffError } from "@flagstaff/sdk";
import type { Writer } from "./output.js";

/** The exit codes of `flagstaff`, documented in `flagstaff --help` and the README. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  /** `flagstaff diff`: the document differs from the project (there are changes to apply). */
  changes: 2,
  notFound: 3,
  auth: 4,
  conflict: 5,
  invalid: 6,
  unavailable: 7,
} as const;

export const EXIT_CODE_HELP: readonly [number, string][] = [
  [EXIT.ok, "success (also for a check that answers disabled)"],
  [EXIT.unexpected, "unexpected error (500 internal, a bug, an answer that is not the API's)"],
  [EXIT.usage, "usage error: unknown command or option, missing or malformed argument"],
  [EXIT.changes, "diff only: the document differs from the project (changes to apply; 0: none)"],
  [EXIT.notFound, "not found: any *_not_found (404)"],
  [EXIT.auth, "authentication or authorisation: 401 (no or bad key), 403 (role too low, other project or environment)"],
  [
    EXIT.conflict,
    "conflict: 409 (project, flag, segment or environment exists; default environment; limit), 412 (changed since read)",
  ],
  [EXIT.invalid, "invalid request: 400, 413, 415 (the server refused a value)"],
  [EXIT.unavailable, "server unavailable: connection refused, timeout, 503, 429, 502, 504"],
];

/** An error of the CLI itself, with the exit code and problem code it stands for. */
export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Bad arguments: exit code 2, with a hint at the help of the command that was run. */
export class UsageError extends CliError {
  constructor(
    message: string,
    readonly helpCommand = "flagstaff",
  ) {
    super(EXIT.usage, "usage", message);
    this.name = "UsageError";
  }
}

/** The exit code for an HTTP status and problem code (status 0: the SDK got no answer). */
export function exitCodeForProblem(status: number, code: string): number {
  if (code === "network_error" || code === "timeout") return EXIT.unavailable;
  if (code === "invalid_argument") return EXIT.invalid;
  if (status === 404 || code === "not_found" || code.endsWith("_not_found")) return EXIT.notFound;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 409 || status === 412) return EXIT.conflict;
  if (status === 400 || status === 413 || status === 415) return EXIT.invalid;
  if (status === 429 || status === 502 || status === 503 || status === 504) return EXIT.unavailable;
  return EXIT.unexpected;
}

export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (FlagstaffError.is(error)) return exitCodeForProblem(error.status, error.code);
  return EXIT.unexpected;
}

/** The error as RFC 9457 problem details: the server's own, or one made up for a client-side failure. */
function problemOf(error: unknown): Record<string, unknown> {
  if (FlagstaffError.is(error)) {
    if (error.problem) return error.problem;
    return {
      type: `urn:flagstaff:problem:${error.code}`,
      status: error.status,
      detail: error.detail,
      code: error.code,
    };
  }
  const code = error instanceof CliError ? error.code : "unexpected";
  const detail = error instanceof Error ? error.message : String(error);
  return { type: `urn:flagstaff:problem:${code}`, status: 0, detail, code };
}

/** What to do next, for the problems whose fix is a CLI command rather than what the server's detail says. */
const HINTS: Readonly<Record<string, string>> = {
  environment_not_found: 'Run "flagstaff environments list" to see the project\'s environments.',
  environment_is_default: 'Make another environment the default first: "flagstaff environments update <id> --default".',
  approval_required:
    'Open a change request: "flagstaff change-requests create --environment <id> --flag <name> --patch <json> --title <text>".',
  change_request_conflict:
    'Run "flagstaff change-requests get <id>" to see which flag changed, and open a new request.',
};

/** Writes the error to `stderr` (problem JSON with `json`) and answers its exit code. */
export function reportError(error: unknown, json: boolean, stderr: Writer): number {
  const exitCode = exitCodeOf(error);
  if (json) {
    stderr.write(`${JSON.stringify(problemOf(error), null, 2)}\n`);
    return exitCode;
  }
  const lines: string[] = [];
  if (FlagstaffError.is(error)) {
    lines.push(`flagstaff: ${error.detail} (${error.status === 0 ? "" : `${error.status} `}${error.code})`);
    for (const field of error.errors) lines.push(`  ${field.path}: ${field.message}`);
    const hint = HINTS[error.code];
    if (hint !== undefined) lines.push(hint);
  } else if (error instanceof CliError) {
    lines.push(`flagstaff: ${error.message}`);
    if (error instanceof UsageError) lines.push(`Run "${error.helpCommand} --help" for usage.`);
  } else {
    lines.push(
      `flagstaff: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
  }
  stderr.write(`${lines.join("\n")}\n`);
  return exitCode;
}
