import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type Command, Context, GLOBAL_OPTIONS, type Noun, type Options } from "./command.js";
import { access } from "./commands/access.js";
import { check } from "./commands/check.js";
import { applyNoun, diffNoun } from "./commands/apply.js";
import { exportNoun } from "./commands/export.js";
import { importNoun } from "./commands/import.js";
import { environments } from "./commands/environments.js";
import { changeRequests } from "./commands/change-requests.js";
import { events } from "./commands/events.js";
import { flags } from "./commands/flags.js";
import { keys } from "./commands/keys.js";
import { projects } from "./commands/projects.js";
import { segments } from "./commands/segments.js";
import { users } from "./commands/users.js";
import { webhooks } from "./commands/webhooks.js";
import { EXIT, EXIT_CODE_HELP, reportError, UsageError } from "./errors.js";
import { closest } from "./suggest.js";
import { type CliIo, writeOut } from "./output.js";

export { EXIT } from "./errors.js";
export type { CliIo, Writer } from "./output.js";

/** Every command, by noun (exported for the tests that go through them all). */
export const NOUNS: readonly Noun[] = [
  projects,
  keys,
  environments,
  flags,
  changeRequests,
  segments,
  check,
  exportNoun,
  importNoun,
  diffNoun,
  applyNoun,
  events,
  webhooks,
  users,
  access,
];

const VERSION: string = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;

const commandsOf = (noun: Noun): [string, Command][] =>
  noun.command ? [["", noun.command]] : Object.entries(noun.verbs ?? {});

/** Names of the options that take a value, in any command: needed to tell a noun from an option's value. */
const VALUE_OPTIONS = new Set<string>();
for (const options of [GLOBAL_OPTIONS, ...NOUNS.flatMap((n) => commandsOf(n).map(([, c]) => c.options ?? {}))]) {
  for (const [name, spec] of Object.entries(options)) {
    if (spec.type !== "string") continue;
    VALUE_OPTIONS.add(`--${name}`);
    if (spec.short) VALUE_OPTIONS.add(`-${spec.short}`);
  }
}

/** Splits argv into the command words (noun, and verb when the noun has verbs) and everything else. */
function splitCommand(argv: readonly string[]): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg.startsWith("-") && arg !== "-") {
      rest.push(arg);
      if (VALUE_OPTIONS.has(arg) && i + 1 < argv.length) rest.push(argv[++i] as string);
      continue;
    }
    const noun = NOUNS.find((n) => n.name === words[0]);
    const wanted = words.length === 0 ? 1 : noun?.verbs ? 2 : 1;
    if (words.length < wanted) words.push(arg);
    else rest.push(arg);
  }
  return { words, rest };
}

/** The positional arity that `args` ("<name> <actor...>", "[x]") describes. */
function arity(args = ""): { min: number; max: number } {
  const tokens = args.split(" ").filter((t) => t !== "");
  return {
    min: tokens.filter((t) => t.startsWith("<")).length,
    max: tokens.some((t) => t.includes("...")) ? Number.POSITIVE_INFINITY : tokens.length,
  };
}

/**
 * The usage error of an option that is none of the command's: "Unknown option --x; did you mean --y?"
 * with the closest of its options (its own and every command's), rather than parseArgs's words about
 * positional arguments.
 */
function unknownOption(message: string, options: Options, helpCommand: string): UsageError {
  const typed = /^Unknown option '([^']+)'/.exec(message)?.[1] ?? message;
  const names = Object.entries(options).flatMap(([name, o]) => (o.type === "boolean" ? [name, `no-${name}`] : [name]));
  const meant = typed.startsWith("--") ? closest(typed.slice(2).split("=")[0] as string, names) : undefined;
  return new UsageError(
    meant === undefined ? `Unknown option ${typed}.` : `Unknown option ${typed}; did you mean --${meant}?`,
    helpCommand,
  );
}

function parseOptions(options: Options, args: string[], helpCommand: string) {
  const config = Object.fromEntries(
    Object.entries(options).map(([name, { type, multiple = false, short }]) => [
      name,
      short === undefined ? { type, multiple } : { type, multiple, short },
    ]),
  );
  try {
    // allowNegative: a boolean option may be turned off by name (`--no-protected`).
    return parseArgs({ args, options: config, strict: true, allowPositionals: true, allowNegative: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw unknownOption((error as Error).message, options, helpCommand);
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) {
      throw new UsageError((error as Error).message, helpCommand);
    }
    throw error;
  }
}

/** `<id> --name <name>`: the arguments and required options of a command. */
function synopsis(command: Command): string {
  const required = Object.entries(command.options ?? {})
    .filter(([, o]) => o.required)
    .map(([name, o]) => `--${name} ${o.value ?? "<value>"}`);
  return [command.args ?? "", ...required].filter((part) => part !== "").join(" ");
}

// ---- help -------------------------------------------------------------------------------------------

const pad = (rows: [string, string][], indent = "  ") => {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`).join("\n");
};

const optionRows = (options: Options): [string, string][] =>
  Object.entries(options).map(([name, o]) => [
    `${o.short ? `-${o.short}, ` : "    "}--${name}${o.value ? ` ${o.value}` : ""}`,
    o.description,
  ]);

const exitCodes = () => pad(EXIT_CODE_HELP.map(([code, text]) => [String(code), text]));

function mainHelp(): string {
  const rows: [string, string][] = NOUNS.flatMap((noun) =>
    commandsOf(noun).map(([verb, c]): [string, string] => [
      [noun.name, verb, synopsis(c)].filter((part) => part).join(" "),
      c.summary,
    ]),
  );
  return `Usage: flagstaff <command> [<subcommand>] [arguments] [options]

Command-line client of Flagstaff, the self-hosted feature-flag service.

Commands:
${pad(rows)}

Options (every command):
${pad(optionRows(GLOBAL_OPTIONS))}

Output is a readable table; with --json, the server's JSON. Keys, environments, flags, segments, check,
events, webhooks and access work on one project: --project or FLAGSTAFF_PROJECT. Flags and check act on one
environment: --environment or FLAGSTAFF_ENVIRONMENT, else the key's (else the project's default); a key
bound to an environment may name only its own. Admin keys are managed beside the server,
not over the API: "flagstaff-server admin-key --help" (or "npm run admin-key -- --help" in the server's
repository).

Exit codes:
${exitCodes()}

Run "flagstaff <command> --help" or "flagstaff <command> <subcommand> --help" for details.
`;
}

function nounHelp(noun: Noun): string {
  const rows = commandsOf(noun).map(([verb, c]): [string, string] => [`${verb} ${synopsis(c)}`.trim(), c.summary]);
  return `Usage: flagstaff ${noun.name} <subcommand> [arguments] [options]

${noun.summary}.

Subcommands:
${pad(rows)}

Run "flagstaff ${noun.name} <subcommand> --help" for its options, "flagstaff --help" for the exit codes.
`;
}

function commandHelp(commandLine: string, command: Command): string {
  const own = command.options ?? {};
  const sections = [`Usage: ${[commandLine, synopsis(command)].join(" ").trim()} [options]`, `${command.summary}.`];
  if (Object.keys(own).length > 0) sections.push(`Options:\n${pad(optionRows(own))}`);
  // A command may give a global option its own meaning (events' --environment): shown once, as its own.
  const global = Object.fromEntries(Object.entries(GLOBAL_OPTIONS).filter(([name]) => !(name in own)));
  sections.push(`Options (every command):\n${pad(optionRows(global))}`);
  sections.push(`Exit codes:\n${exitCodes()}`);
  return `${sections.join("\n\n")}\n`;
}

// ---- run --------------------------------------------------------------------------------------------

/** The running process's environment and standard streams. */
export const processIo = (): CliIo => ({ env: process.env, stdout: process.stdout, stderr: process.stderr });

/**
 * Runs the CLI on `argv` (without node and the script) and answers its exit code; it never exits the process.
 * Configuration comes from `io.env` and output goes to `io.stdout` and `io.stderr` only.
 */
export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const end = argv.indexOf("--");
  const json = (end === -1 ? argv : argv.slice(0, end)).includes("--json");
  try {
    return await dispatch(argv, io);
  } catch (error) {
    return reportError(error, json, io.stderr);
  }
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const { words, rest } = splitCommand(argv);
  const [nounName, verbName] = words;
  if (nounName === undefined) {
    const { values } = parseOptions(GLOBAL_OPTIONS, rest, "flagstaff");
    if (values.version) writeOut(io.stdout, VERSION);
    else if (values.help) writeOut(io.stdout, mainHelp());
    else {
      io.stderr.write(mainHelp());
      return EXIT.usage;
    }
    return EXIT.ok;
  }
  const noun = NOUNS.find((n) => n.name === nounName);
  if (!noun && nounName === "admin-key") {
    // It needs the database, not the API, so it lives with the server now.
    throw new UsageError(
      'Unknown command "admin-key": admin keys are managed beside the server, in its database. Run ' +
        '"flagstaff-server admin-key --help" (in the repository: "npm run admin-key -- --help").',
    );
  }
  if (!noun) {
    const meant = closest(
      nounName,
      NOUNS.map((n) => n.name),
    );
    throw new UsageError(`Unknown command "${nounName}"${meant === undefined ? "." : `; did you mean ${meant}?`}`);
  }
  let command = noun.command;
  let commandLine = `flagstaff ${noun.name}`;
  if (!command) {
    if (verbName === undefined) {
      const { values } = parseOptions(GLOBAL_OPTIONS, rest, commandLine);
      if (values.help) {
        writeOut(io.stdout, nounHelp(noun));
        return EXIT.ok;
      }
      const verbs = Object.keys(noun.verbs ?? {}).join(", ");
      throw new UsageError(`"${commandLine}" needs a subcommand: ${verbs}.`, commandLine);
    }
    command = noun.verbs?.[verbName];
    if (!command) {
      const meant = closest(verbName, Object.keys(noun.verbs ?? {}));
      const guess = meant === undefined ? "." : `; did you mean "${commandLine} ${meant}"?`;
      throw new UsageError(`Unknown subcommand "${verbName}" of "${commandLine}"${guess}`, commandLine);
    }
    commandLine = `${commandLine} ${verbName}`;
  }
  const { values, positionals } = parseOptions({ ...GLOBAL_OPTIONS, ...command.options }, rest, commandLine);
  if (values.help) {
    writeOut(io.stdout, commandHelp(commandLine, command));
    return EXIT.ok;
  }
  if (values.version) {
    writeOut(io.stdout, VERSION);
    return EXIT.ok;
  }
  for (const [name, option] of Object.entries(command.options ?? {})) {
    if (option.required && values[name] === undefined) throw new UsageError(`--${name} is required.`, commandLine);
  }
  const { min, max } = arity(command.args);
  if (positionals.length < min || positionals.length > max) {
    const expected = command.args ? `${commandLine} ${command.args}` : `${commandLine} without arguments`;
    throw new UsageError(`Wrong number of arguments: expected ${expected}.`, commandLine);
  }
  return (await command.run(new Context(commandLine, positionals, values, io))) ?? EXIT.ok;
}
