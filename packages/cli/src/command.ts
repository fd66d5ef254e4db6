import { readFile } from "node:fs/promises";
import { FlagstaffClient } from "@flagstaff/sdk";
import { UsageError } from "./errors.js";
import { type CliIo, writeJson, writeOut } from "./output.js";

/** An option of a command, as parseArgs takes it plus what `--help` shows. */
export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly multiple?: boolean;
  readonly short?: string;
  /** The value's placeholder in help, e.g. "<n>". */
  readonly value?: string;
  readonly description: string;
  /** The command cannot run without it (shown in the synopsis, checked before the command runs). */
  readonly required?: boolean;
}

export type Options = Record<string, OptionSpec>;

/** One runnable command, e.g. `flags set`. */
export interface Command {
  /** Positional arguments as help shows them: `<x>` required, `[x]` optional, `...` repeatable (last only). */
  readonly args?: string;
  readonly summary: string;
  readonly options?: Options;
  /** Runs the command; an exit code other than 0 when its outcome is one (`diff`: changes), else nothing. */
  // biome-ignore lint/suspicious/noConfusingVoidType: most commands return nothing; void lets them say so.
  run(ctx: Context): Promise<void | number>;
}

/** A noun with its verbs (`flags list`), or a noun that is a command itself (`check`). */
export interface Noun {
  readonly name: string;
  readonly summary: string;
  readonly verbs?: Record<string, Command>;
  readonly command?: Command;
}

export const DEFAULT_URL = "http://127.0.0.1:8080";

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Options every command takes. */
export const GLOBAL_OPTIONS: Options = {
  url: { type: "string", value: "<url>", description: `Server address (env FLAGSTAFF_URL; default ${DEFAULT_URL})` },
  key: { type: "string", value: "<key>", description: "API key (env FLAGSTAFF_API_KEY)" },
  project: {
    type: "string",
    value: "<id>",
    description: "Project of keys, environments, flags, segments, check, events and webhooks (env FLAGSTAFF_PROJECT)",
  },
  environment: {
    type: "string",
    value: "<id>",
    description:
      "Environment of flags, check and keys create (env FLAGSTAFF_ENVIRONMENT; default: the key's, else the project's default)",
  },
  json: {
    type: "boolean",
    description: "Print raw JSON: lists as arrays of every page, errors as problem JSON on stderr",
  },
  timeout: {
    type: "string",
    value: "<ms>",
    description: "Milliseconds each request may take (default 5000; diff, apply, import: 600000; 0: none)",
  },
  help: { type: "boolean", short: "h", description: "Show help (of the whole CLI, a noun or a command)" },
  version: { type: "boolean", short: "V", description: "Print the version" },
};

/**
 * The options that say whom a flag is evaluated for (`check`, `flags explain`): actors, and context
 * attributes (`attributesFor` says what for, after "A context attribute": " for the flag's rules").
 */
export function contextOptions(attributesFor = ""): Options {
  return {
    actor: { type: "string", multiple: true, short: "a", value: "<id>", description: "An actor id (repeatable)" },
    attribute: {
      type: "string",
      multiple: true,
      value: "<name=value>",
      description: `A context attribute${attributesFor} (repeatable; a name repeated makes a list)`,
    },
  };
}

type Value = string | boolean | (string | boolean)[] | undefined;

/** What a command runs with: its arguments and options, configuration, and the SDK client. */
export class Context {
  private clientInstance: FlagstaffClient | undefined;

  constructor(
    /** `flagstaff flags set`: named in usage errors. */
    readonly commandLine: string,
    readonly args: readonly string[],
    private readonly values: Record<string, Value>,
    private readonly io: CliIo,
  ) {}

  get json(): boolean {
    return this.values.json === true;
  }

  usage(message: string): UsageError {
    return new UsageError(message, this.commandLine);
  }

  /** The positional argument at `index` (arity is checked before a command runs). */
  arg(index: number): string {
    return this.args[index] as string;
  }

  /** A string option, or undefined when it was not given. */
  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === "string" ? value : undefined;
  }

  /** A string option the command cannot do without. */
  required(name: string): string {
    const value = this.string(name);
    if (value === undefined) throw this.usage(`--${name} is required.`);
    return value;
  }

  /** A boolean option: true when it was given. */
  boolean(name: string): boolean {
    return this.values[name] === true;
  }

  /** A boolean option that may be turned on (`--name`) or off (`--no-name`): undefined when neither was given. */
  toggle(name: string): boolean | undefined {
    const value = this.values[name];
    return typeof value === "boolean" ? value : undefined;
  }

  /** Every value of a repeatable option. */
  strings(name: string): string[] {
    const value = this.values[name];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  }

  /** A whole-number option such as a percentage; the server judges its range. */
  integer(name: string): number | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (!/^-?\d+$/.test(raw.trim())) throw this.usage(`--${name} must be a whole number, got "${raw}".`);
    return Number(raw);
  }

  /** A JSON option (`--rules '[…]'`), parsed; undefined when it was not given. */
  jsonOption<T = unknown>(name: string): T | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    return this.parseJson<T>(raw, `--${name}`);
  }

  /**
   * A JSON value given inline (`--rules '[…]'`) or in a file (`--rules-file rules.json`), at most one of
   * the two; undefined when neither was given.
   */
  async jsonOrFile<T = unknown>(name: string, fileOption = `${name}-file`): Promise<T | undefined> {
    const path = this.string(fileOption);
    if (path === undefined) return this.jsonOption<T>(name);
    if (this.string(name) !== undefined) throw this.usage(`Pass --${name} or --${fileOption}, not both.`);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      throw this.usage(
        `--${fileOption}: cannot read ${path} (${error instanceof Error ? error.message : String(error)}).`,
      );
    }
    return this.parseJson<T>(text, `--${fileOption} ${path}`);
  }

  private parseJson<T>(text: string, where: string): T {
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw this.usage(`${where} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * Context attributes from repeated `--attribute NAME=VALUE` options: the text after the first `=` is the
   * value; a name given again makes a list. Undefined when none were given.
   */
  attributes(name = "attribute"): Record<string, string | string[]> | undefined {
    const given = this.strings(name);
    if (given.length === 0) return undefined;
    const out: Record<string, string | string[]> = Object.create(null);
    for (const pair of given) {
      const at = pair.indexOf("=");
      if (at <= 0) throw this.usage(`--${name} must be NAME=VALUE, got "${pair}".`);
      const key = pair.slice(0, at);
      const value = pair.slice(at + 1);
      const existing = out[key];
      out[key] = existing === undefined ? value : ([] as string[]).concat(existing, value);
    }
    return out;
  }

  /** Whom a flag is evaluated for, from the options of contextOptions: the actors and the attributes. */
  evaluationContext(): { actorIds: string[]; attributes: Record<string, string | string[]> | undefined } {
    return { actorIds: this.strings("actor"), attributes: this.attributes() };
  }

  /** The project of project-scoped commands: --project, else FLAGSTAFF_PROJECT. */
  project(): string {
    const project = this.string("project") ?? (this.io.env.FLAGSTAFF_PROJECT || undefined);
    if (project === undefined) throw this.usage("No project: pass --project <id> or set FLAGSTAFF_PROJECT.");
    return project;
  }

  /**
   * The environment flag commands and check act on: --environment, else FLAGSTAFF_ENVIRONMENT; undefined
   * leaves it to the server (the key's environment, else the project's default).
   */
  environment(): string | undefined {
    const given = this.string("environment");
    if (given === "") throw this.usage("--environment needs an environment id.");
    return given ?? (this.io.env.FLAGSTAFF_ENVIRONMENT || undefined);
  }

  /** The server's address: --url, else FLAGSTAFF_URL, else the default (for links to the console). */
  serverUrl(): string {
    return this.string("url") ?? (this.io.env.FLAGSTAFF_URL || DEFAULT_URL);
  }

  /** The SDK client for --url/--key/--timeout/--environment or their environment variables. */
  client(): FlagstaffClient {
    this.clientInstance ??= this.makeClient(this.environment());
    return this.clientInstance;
  }

  /**
   * A client like `client()`'s for a request that may take long (applying a document of thousands of flags
   * in one write): without --timeout, it waits `defaultTimeoutMs` rather than the usual 5 s, so it does not
   * give up on a write that goes on and commits.
   */
  patientClient(defaultTimeoutMs: number): FlagstaffClient {
    return this.makeClient(this.environment(), defaultTimeoutMs);
  }

  /** A client like `client()`'s that acts on `environment` instead (a flag as it is there). */
  clientIn(environment: string): FlagstaffClient {
    return this.makeClient(environment);
  }

  private makeClient(environment: string | undefined, defaultTimeoutMs?: number): FlagstaffClient {
    const baseUrl = this.serverUrl();
    let parsed: URL;
    try {
      parsed = new URL(baseUrl);
    } catch {
      throw this.usage(`The server address "${baseUrl}" is not a URL.`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw this.usage(`The server address must be http:// or https://, got "${baseUrl}".`);
    }
    const timeout = this.string("timeout");
    if (timeout !== undefined && !/^\d+$/.test(timeout)) {
      throw this.usage(`--timeout must be a whole number of milliseconds, got "${timeout}".`);
    }
    return new FlagstaffClient({
      baseUrl,
      apiKey: this.string("key") ?? (this.io.env.FLAGSTAFF_API_KEY || undefined),
      timeoutMs: timeout === undefined ? defaultTimeoutMs : Number(timeout),
      environment,
    });
  }

  /**
   * A password read from standard input (`--password-stdin`: never in an argument, where the shell's history
   * and the process list would keep it), without its final line break.
   */
  async passwordFromStdin(): Promise<string> {
    const text = await (this.io.readStdin ?? readProcessStdin)();
    return text.replace(/\r?\n$/, "");
  }

  /** Prints `data` as JSON with --json, else the text `render` makes of it. */
  print<T>(data: T, render: (data: T) => string): void {
    if (this.json) writeJson(this.io.stdout, data);
    else writeOut(this.io.stdout, render(data));
  }

  /** Prints a confirmation for an answer without a body (204): nothing with --json. */
  done(message: string): void {
    if (!this.json) writeOut(this.io.stdout, message);
  }
}
