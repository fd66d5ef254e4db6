import {
  ACTOR_ID_MAX_LENGTH,
  type AttributeValue,
  dependenciesOf,
  evaluateFlag,
  failedResolution,
  type FlagState,
  isActorId,
  isProjectChange,
  MAX_ACTORS,
  type ProjectChange,
  ProjectState,
  type ProjectStateJSON,
  READABLE_STATE_FORMATS,
  type Resolution,
  type ResolutionErrorCode,
  resolutionOf,
  type TargetingResolver,
} from "@flagstaff/core";
import { FlagstaffError, isProblemDetails } from "./errors.js";
import { readEventStream, type StreamEnd, type StreamMessage } from "./event-stream.js";
import type { FetchLike } from "./http.js";
import { systemTimers, type Timers } from "./timers.js";

/** Options of a local evaluator. */
export interface LocalEvaluatorOptions {
  /** Where the server listens, e.g. `http://127.0.0.1:8080`; a path prefix is kept. */
  url: string;
  /** A project key of role `read` (or `write`, or an admin key): the state carries targeting data. */
  key: string;
  /** The project to follow. */
  projectId: string;
  /** The fetch to use (default `globalThis.fetch`); it must stream response bodies. */
  fetch?: FetchLike;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Uniform numbers in [0, 1) for the call rollout (default `Math.random`). */
  random?: () => number;
  /** The evaluation time rules read as `$now`, in milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /** First reconnection delay, doubled after each failure, with jitter (default 500). */
  retryDelayMs?: number;
  /** Longest reconnection delay (default 30000). */
  maxRetryDelayMs?: number;
  /** Milliseconds to wait for the stream's headers (default 10000). */
  connectTimeoutMs?: number;
  /** A stream silent this long is dead and is reopened; the server comments every 15 s (default 45000). */
  idleTimeoutMs?: number;
  /** A stream that ends sooner than this after it opened counts as cut short by something on the way (default 5000). */
  shortStreamMs?: number;
  /** After this many streams in a row are blocked or cut short, poll instead (default 3). */
  pollAfterFailures?: number;
  /** Milliseconds between polls in polling mode (default 30000). */
  pollIntervalMs?: number;
  /** How long one poll waits for the first event before it takes "nothing new" for an answer (default 3000). */
  pollWindowMs?: number;
  /** In polling mode, try streaming again after this many polls (default 10). */
  streamRetryPolls?: number;
  /** The clock and timers of every delay and timeout (default: `Date.now` and the global timers); for tests. */
  timers?: Timers;
}

/**
 * Where a local evaluator stands. `connecting`: no stream yet; `streaming`: following the stream;
 * `reconnecting`: the stream dropped, waiting to resume; `polling`: streaming is blocked on the way, the
 * stream is reopened briefly every `pollIntervalMs`; `stopped`: a fatal error (see `error`); `closed`.
 */
export type LocalEvaluatorStatus = "connecting" | "streaming" | "reconnecting" | "polling" | "stopped" | "closed";

/** What the `change` event carries: the new version and the names of the flags that may answer differently. */
export interface LocalChange {
  readonly version: number;
  readonly flags: readonly string[];
  /** True when a fresh snapshot replaced the state (the place could not be resumed). */
  readonly snapshot: boolean;
}

/** What the `error` event carries. A fatal error stops the evaluator; others are retried. */
export interface LocalEvaluatorError {
  readonly error: FlagstaffError;
  readonly fatal: boolean;
}

/** The events of a local evaluator and what their listeners get. */
export interface LocalEvaluatorEvents {
  change: LocalChange;
  status: LocalEvaluatorStatus;
  error: LocalEvaluatorError;
}

/**
 * Why a local evaluation could not be made; the names are OpenFeature's (and OFREP's) error codes
 * (core's RESOLUTION_ERROR_CODES). PARSE_ERROR: the flag's configuration is one the server's validator
 * would refuse (it cannot come from a server of this version); GENERAL: anything else the engine could
 * not evaluate.
 */
export type LocalEvaluationErrorCode = ResolutionErrorCode;

/**
 * Who and what a flag is evaluated for: actors (any one attached or in the rollout turns it on) and the
 * context attributes its rules read (a string, a number, a boolean or a list of strings; null or
 * undefined counts as missing).
 */
export interface LocalEvaluationContext {
  readonly actorIds?: readonly string[];
  readonly attributes?: Readonly<Record<string, AttributeValue | null | undefined>>;
}

/**
 * A local evaluation: the variant served, its value, `enabled` (the variant is not the flag's offVariant;
 * a boolean flag: it serves `on`) and the reason, as the server's check and OFREP answer them (core's
 * Resolution, mapped by the same resolutionOf); `ruleId` names the rule that decided, `prerequisite` the
 * prerequisite flag that failed. When no evaluation could be made: `enabled: false`, reason `ERROR`,
 * variant and value null, and why.
 */
export type LocalEvaluation = Resolution;

/** The attributes' problem, if they are not an object of attributes. */
function attributesProblem(attributes: unknown): string | undefined {
  if (attributes === undefined || attributes === null) return undefined;
  if (typeof attributes !== "object" || Array.isArray(attributes)) {
    return "attributes must be an object of attribute names to values.";
  }
  return undefined;
}

/** The server's rule for actor ids (docs/api.md, Limits), so that a local answer is one the server would give. */
function actorIdProblem(actorIds: unknown): string | undefined {
  if (!Array.isArray(actorIds)) return "actorIds must be an array of strings.";
  if (actorIds.length > MAX_ACTORS) return `At most ${MAX_ACTORS} actor ids.`;
  for (const id of actorIds) {
    if (typeof id !== "string") return "actorIds must be an array of strings.";
    if (!isActorId(id)) {
      return `${JSON.stringify(id)} is not an actor id (1–${ACTOR_ID_MAX_LENGTH} characters, no control characters, other than . and ..).`;
    }
  }
  return undefined;
}

/**
 * An error that stops the evaluator: a state format or a change kind this SDK does not know (a newer
 * server's). The evaluator stops with code `unsupported_format` and this message, which says to upgrade.
 */
export class FatalStreamError extends Error {
  override readonly name = "FatalStreamError";
}

/** Everything evaluation sees of one flag (but its prerequisites' flags), as text, to tell which flags a fresh snapshot changed. */
function signature(state: ProjectState, flag: FlagState): string {
  const sorted = (values: Iterable<string>) => [...values].sort().join("\u0001");
  const segments = [...dependenciesOf(flag).segments]
    .sort()
    .map(
      (id) =>
        `${id}=${sorted(state.segmentMembers.get(id) ?? [])}:${JSON.stringify(state.segmentConditions(id) ?? [])}`,
    )
    .join("\u0002");
  const targeting = JSON.stringify([
    flag.type,
    flag.variants,
    flag.onVariant,
    flag.offVariant,
    flag.rules,
    flag.prerequisites,
  ]);
  return [flag.status, flag.percentageActors, flag.percentageCalls, sorted(flag.actors), segments, targeting].join(
    "\u0003",
  );
}

/** Names of the flags that answer differently in `after` than in `before`, prerequisites' dependents included. */
function changedFlags(before: ProjectState, after: ProjectState): string[] {
  const out: string[] = [];
  for (const [name, flag] of after.flagsByName) {
    const old = before.flagsByName.get(name);
    if (!old || old.id !== flag.id || signature(before, old) !== signature(after, flag)) out.push(name);
  }
  const gone = [...before.flagsByName.keys()].filter((name) => !after.flagsByName.has(name));
  return [...new Set([...withDependents(after, out), ...gone])].sort();
}

/** The state's resolver for the engine: segments (members and conditions), other flags, the clock, the draw. */
function resolverOf(state: ProjectState, now: () => number, random: () => number): TargetingResolver {
  return {
    isMember: state.isMember,
    segmentConditions: (segmentId) => state.segmentConditions(segmentId),
    flag: (name) => state.flag(name),
    now,
    random,
  };
}

function parseData(message: StreamMessage): Record<string, unknown> {
  const data: unknown = JSON.parse(message.data);
  if (typeof data !== "object" || data === null || typeof (data as { version?: unknown }).version !== "number") {
    throw new Error(`a ${message.event} event without a version`);
  }
  return data as Record<string, unknown>;
}

/**
 * Evaluates a project's flags in this process: it loads the project's state from the stream
 * (`GET /projects/{projectId}/stream`), follows its changes, and answers `evaluate` synchronously from
 * memory with the server's own rules (`evaluateFlag`, `resolutionOf` and `ProjectState` from `@flagstaff/core`). The call
 * rollout is drawn here. Create one with `createLocalEvaluator`; it starts at once.
 */
export class LocalEvaluator {
  private state: ProjectState | undefined;
  /** What the engine looks up in `state`; made with it. */
  private resolver: TargetingResolver | undefined;
  private currentVersion = 0;
  private currentStatus: LocalEvaluatorStatus = "connecting";
  private fatal: FlagstaffError | undefined;
  private lastError: FlagstaffError | undefined;
  /** Whether the next request may resume from `version` (false after the stream sent something unexpected). */
  private stateForResume = true;
  private readonly listeners = new Map<keyof LocalEvaluatorEvents, Set<(value: never) => void>>();
  private readonly readyPromise: Promise<void>;
  private settleReady: (error?: Error) => void = () => {};
  private readonly attempt = new AbortController();
  private wake: (() => void) | undefined;
  private sleepTimer: unknown;
  private readonly streamUrl: string;
  private readonly fetchImpl: FetchLike;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly timers: Timers;
  private readonly settings: Required<
    Omit<LocalEvaluatorOptions, "url" | "key" | "projectId" | "fetch" | "headers" | "random" | "now" | "timers">
  >;
  private readonly running: Promise<void>;

  /** Prefer `createLocalEvaluator(options)`. Starts following the project at once. */
  constructor(private readonly options: LocalEvaluatorOptions) {
    for (const name of ["url", "key", "projectId"] as const) {
      if (typeof options?.[name] !== "string" || options[name] === "") {
        throw new TypeError(`createLocalEvaluator needs ${name === "url" ? "a url" : `a ${name}`}`);
      }
    }
    this.streamUrl = `${options.url.replace(/\/+$/, "")}/projects/${encodeURIComponent(options.projectId)}/stream`;
    this.fetchImpl = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.timers = options.timers ?? systemTimers;
    this.settings = {
      retryDelayMs: options.retryDelayMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 45_000,
      shortStreamMs: options.shortStreamMs ?? 5000,
      pollAfterFailures: options.pollAfterFailures ?? 3,
      pollIntervalMs: options.pollIntervalMs ?? 30_000,
      pollWindowMs: options.pollWindowMs ?? 3000,
      streamRetryPolls: options.streamRetryPolls ?? 10,
    };
    this.readyPromise = new Promise<void>((resolve, reject) => {
      this.settleReady = (error) => {
        this.settleReady = () => {};
        if (error) reject(error);
        else resolve();
      };
    });
    // ready() hands out its own promises; this one must not count as an unhandled rejection.
    this.readyPromise.catch(() => {});
    this.running = this.run();
  }

  /** The project version the state is at (0 until the first snapshot). */
  get version(): number {
    return this.currentVersion;
  }

  /** Where the evaluator stands: connecting, streaming, reconnecting, polling, stopped or closed. */
  get status(): LocalEvaluatorStatus {
    return this.currentStatus;
  }

  /** Whether the first snapshot has arrived, so that evaluations answer. */
  get isReady(): boolean {
    return this.state !== undefined;
  }

  /** The error that stopped the evaluator (401/403 on a revoked key, 404, an unknown state format), if any. */
  get error(): FlagstaffError | undefined {
    return this.fatal;
  }

  /**
   * Resolves once the first snapshot is loaded. Rejects with the fatal error if the evaluator stops first,
   * with code `closed` if it is closed first, and with code `timeout` after `timeoutMs` (if given; the
   * evaluator goes on trying).
   */
  ready(timeoutMs?: number): Promise<void> {
    if (timeoutMs === undefined || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) return this.readyPromise;
    return new Promise<void>((resolve, reject) => {
      const timer = this.timers.setTimeout(() => {
        reject(
          new FlagstaffError({
            status: 0,
            code: "timeout",
            detail: `No snapshot from ${this.streamUrl} within ${timeoutMs} ms${this.lastError ? ` (last error: ${this.lastError.message})` : ""}.`,
          }),
        );
      }, timeoutMs);
      this.readyPromise.then(resolve, reject).finally(() => this.timers.clearTimeout(timer));
    });
  }

  /** Listens to an event; answers a function that removes the listener. A listener's exception is rethrown outside the evaluator. */
  on<E extends keyof LocalEvaluatorEvents>(event: E, listener: (value: LocalEvaluatorEvents[E]) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    const entry = listener as (value: never) => void;
    set.add(entry);
    return () => {
      this.listeners.get(event)?.delete(entry);
    };
  }

  /**
   * Evaluates a flag synchronously with the server's rules (core's `evaluateFlag`): for actors (any one
   * enables it), given as a list or as `{actorIds, attributes}` with the context attributes the flag's rules
   * read. Answers the variant, its value, `enabled` and the reason the server's check and OFREP give.
   * Never throws: an unknown flag, a state not loaded yet, or a context the server would refuse answer
   * `enabled: false`, reason `ERROR` and an `errorCode`. After a stop or `close()` it answers from the last
   * state it had.
   */
  evaluate(flagName: string, context: readonly string[] | LocalEvaluationContext = []): LocalEvaluation {
    const state = this.state;
    const resolver = this.resolver;
    if (!state || !resolver) {
      return failedResolution(
        "PROVIDER_NOT_READY",
        this.fatal
          ? `The local evaluator stopped before it loaded the state: ${this.fatal.message}`
          : "The local evaluator has not loaded the project's state yet (await ready()).",
      );
    }
    const isList = Array.isArray(context);
    if (!isList && (typeof context !== "object" || context === null)) {
      return failedResolution("INVALID_CONTEXT", "The context must be a list of actor ids or {actorIds, attributes}.");
    }
    const actorIds = isList ? (context as readonly string[]) : ((context as LocalEvaluationContext).actorIds ?? []);
    const attributes = isList ? undefined : (context as LocalEvaluationContext).attributes;
    const problem = actorIdProblem(actorIds) ?? attributesProblem(attributes);
    if (problem !== undefined) return failedResolution("INVALID_CONTEXT", problem);
    const flag = typeof flagName === "string" ? state.flagsByName.get(flagName) : undefined;
    if (!flag) return failedResolution("FLAG_NOT_FOUND", `Flag ${JSON.stringify(flagName)} does not exist.`);
    return resolutionOf(flag, evaluateFlag(flag, { actorIds, attributes }, resolver));
  }

  /** Whether a flag is on (serves anything but its offVariant): `evaluate(...).enabled` (false for an unknown flag). */
  isEnabled(flagName: string, context: readonly string[] | LocalEvaluationContext = []): boolean {
    return this.evaluate(flagName, context).enabled;
  }

  /** The names of the project's flags, in order (empty until ready). */
  flagNames(): readonly string[] {
    return this.state?.flagNamesInOrder() ?? [];
  }

  /** Stops following the project: the connection and every timer go. Evaluations go on answering the last state. */
  async close(): Promise<void> {
    if (this.currentStatus !== "closed") {
      this.setStatus("closed");
      this.settleReady(new FlagstaffError({ status: 0, code: "closed", detail: "The local evaluator was closed." }));
      this.attempt.abort();
      this.interruptSleep();
    }
    await this.running;
    this.listeners.clear();
  }

  // ---------------------------------------------------------------------------------------------------

  private get done(): boolean {
    return this.currentStatus === "closed" || this.currentStatus === "stopped";
  }

  private emit<E extends keyof LocalEvaluatorEvents>(event: E, value: LocalEvaluatorEvents[E]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as (value: LocalEvaluatorEvents[E]) => void)(value);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  private setStatus(status: LocalEvaluatorStatus): void {
    if (this.currentStatus === status || this.currentStatus === "closed") return;
    this.currentStatus = status;
    this.emit("status", status);
  }

  private report(error: FlagstaffError): void {
    this.lastError = error;
    this.emit("error", { error, fatal: false });
  }

  private stop(error: FlagstaffError): void {
    if (this.done) return;
    this.fatal = error;
    this.setStatus("stopped");
    this.settleReady(error);
    this.emit("error", { error, fatal: true });
  }

  private headers(): Record<string, string> {
    return {
      ...(this.options.headers ?? {}),
      accept: "text/event-stream",
      authorization: `Bearer ${this.options.key}`,
      ...(this.state && this.stateForResume ? { "last-event-id": String(this.currentVersion) } : {}),
    };
  }

  /** Waits, unless `close()` comes first. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.sleepTimer = this.timers.setTimeout(resolve, ms);
    });
  }

  private interruptSleep(): void {
    if (this.sleepTimer !== undefined) this.timers.clearTimeout(this.sleepTimer);
    this.sleepTimer = undefined;
    this.wake?.();
    this.wake = undefined;
  }

  /** Exponential backoff with jitter: between half and all of retryDelayMs × 2^failures, capped. */
  private backoff(failures: number): number {
    const { retryDelayMs, maxRetryDelayMs } = this.settings;
    const ceiling = Math.min(maxRetryDelayMs, retryDelayMs * 2 ** Math.min(failures, 30));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  /** The error a stream's end means, and whether it is fatal; undefined for a normal end. */
  private classify(end: StreamEnd): { error: FlagstaffError; fatal: boolean } | undefined {
    const base = { method: "GET", url: this.streamUrl };
    switch (end.kind) {
      case "ended":
      case "aborted":
        return undefined;
      case "idle":
      case "timeout": {
        const detail =
          end.kind === "idle"
            ? `The stream ${this.streamUrl} was silent for ${this.settings.idleTimeoutMs} ms.`
            : `No answer from ${this.streamUrl} within ${this.settings.connectTimeoutMs} ms.`;
        return { fatal: false, error: new FlagstaffError({ ...base, status: 0, code: "timeout", detail }) };
      }
      case "network": {
        const cause = end.error instanceof Error ? end.error : undefined;
        const inner = cause?.cause instanceof Error ? `: ${cause.cause.message}` : "";
        return {
          fatal: false,
          error: new FlagstaffError({
            ...base,
            status: 0,
            code: "network_error",
            detail: `GET ${this.streamUrl} failed: ${cause?.message ?? String(end.error)}${inner}`,
            cause: end.error,
          }),
        };
      }
      case "not_event_stream":
        return {
          fatal: false,
          error: new FlagstaffError({
            ...base,
            status: end.status,
            code: "stream_blocked",
            detail: `GET ${this.streamUrl} answered ${end.status} with ${JSON.stringify(end.contentType)}, not an event stream: something on the way blocks streaming.`,
          }),
        };
      case "failed":
        if (end.error instanceof FatalStreamError) {
          return {
            fatal: true,
            error: new FlagstaffError({
              ...base,
              status: 0,
              code: "unsupported_format",
              detail: end.error.message,
              cause: end.error,
            }),
          };
        }
        return {
          fatal: false,
          error: new FlagstaffError({
            ...base,
            status: 0,
            code: "invalid_response",
            detail: `The stream sent something unexpected (${end.error instanceof Error ? end.error.message : String(end.error)}); starting over from a snapshot.`,
            cause: end.error,
          }),
        };
      case "http": {
        let parsed: unknown;
        try {
          parsed = JSON.parse(end.body);
        } catch {
          // not JSON
        }
        const problem = isProblemDetails(parsed) ? parsed : undefined;
        const error = new FlagstaffError({
          ...base,
          status: end.status,
          code: problem?.code ?? "http_error",
          detail:
            typeof problem?.detail === "string" ? problem.detail : `GET ${this.streamUrl} answered ${end.status}.`,
          problem,
        });
        // 401/403: the key was revoked or may not read the project; 404: no such project (or no stream here).
        const fatal = end.status === 401 || end.status === 403 || end.status === 404 || end.status === 400;
        return { fatal, error };
      }
    }
  }

  private async run(): Promise<void> {
    let failures = 0; // for the backoff
    let blocked = 0; // streams in a row blocked or cut short
    while (!this.done) {
      if (blocked >= this.settings.pollAfterFailures) {
        blocked = await this.poll();
        continue;
      }
      let openedAt: number | undefined;
      let received = false;
      const end = await readEventStream({
        url: this.streamUrl,
        headers: this.headers(),
        fetch: this.fetchImpl,
        signal: this.attempt.signal,
        timers: this.timers,
        connectTimeoutMs: this.settings.connectTimeoutMs,
        idleTimeoutMs: this.settings.idleTimeoutMs,
        onOpen: () => {
          openedAt = this.timers.now();
          this.setStatus("streaming");
        },
        onMessage: (message) => {
          this.handle(message);
          received = true;
        },
      });
      if (this.done) break;
      const problem = this.classify(end);
      if (problem?.fatal) {
        this.stop(problem.error);
        break;
      }
      if (received) failures = 0;
      const cutShort = openedAt !== undefined && this.timers.now() - openedAt < this.settings.shortStreamMs;
      if (end.kind === "not_event_stream" || (cutShort && end.kind !== "failed")) blocked++;
      else if (openedAt !== undefined) blocked = 0;
      // Start over from a snapshot: the state can no longer be trusted.
      if (end.kind === "failed") this.stateForResume = false;
      if (problem) this.report(problem.error);
      this.setStatus("reconnecting");
      if (blocked >= this.settings.pollAfterFailures) continue;
      await this.sleep(received && !cutShort ? this.backoff(0) : this.backoff(failures++));
    }
  }

  /**
   * Polling mode: reopens the stream every `pollIntervalMs`, takes what it sends at once (the changes since
   * `version`, or a snapshot) and closes it. After `streamRetryPolls` polls it answers 0, to try streaming.
   */
  private async poll(): Promise<number> {
    this.setStatus("polling");
    for (let polls = 0; polls < this.settings.streamRetryPolls && !this.done; polls++) {
      const window = new AbortController();
      const onClose = () => window.abort();
      this.attempt.signal.addEventListener("abort", onClose, { once: true });
      const timers = this.timers;
      let quiet: unknown;
      const windowTimer = timers.setTimeout(
        () => window.abort(),
        this.settings.connectTimeoutMs + this.settings.pollWindowMs,
      );
      let openTimer: unknown;
      const end = await readEventStream({
        url: this.streamUrl,
        headers: this.headers(),
        fetch: this.fetchImpl,
        signal: window.signal,
        timers,
        connectTimeoutMs: this.settings.connectTimeoutMs,
        idleTimeoutMs: 0,
        onOpen: () => {
          openTimer = timers.setTimeout(() => window.abort(), this.settings.pollWindowMs);
        },
        onMessage: (message) => {
          this.handle(message);
          // What the server has at once comes in one burst: close shortly after it.
          if (quiet !== undefined) timers.clearTimeout(quiet);
          quiet = timers.setTimeout(() => window.abort(), 200);
        },
      });
      timers.clearTimeout(windowTimer);
      if (openTimer !== undefined) timers.clearTimeout(openTimer);
      if (quiet !== undefined) timers.clearTimeout(quiet);
      this.attempt.signal.removeEventListener("abort", onClose);
      if (this.done) break;
      const problem = this.classify(end);
      if (problem?.fatal) {
        this.stop(problem.error);
        break;
      }
      if (end.kind === "failed") this.stateForResume = false;
      if (problem) this.report(problem.error);
      await this.sleep(this.settings.pollIntervalMs);
    }
    return 0;
  }

  /** Applies one event of the stream. Throws on anything it cannot trust (the stream then starts over). */
  private handle(message: StreamMessage): void {
    if (this.currentStatus === "closed") return;
    if (message.event === "snapshot") {
      const data = parseData(message);
      const json = data.state as ProjectStateJSON;
      const format = (json as { format?: unknown } | undefined)?.format;
      if (typeof format !== "number" || !READABLE_STATE_FORMATS.includes(format)) {
        throw new FatalStreamError(
          `The stream sent a project state of format ${JSON.stringify(format)}; this @flagstaff/sdk reads formats ` +
            `${READABLE_STATE_FORMATS.join(" and ")} only. Upgrade @flagstaff/sdk to a version that reads format ${JSON.stringify(format)}.`,
        );
      }
      let next: ProjectState;
      try {
        next = ProjectState.fromJSON(json);
      } catch (error) {
        throw new FatalStreamError(
          `The stream sent a state this SDK cannot read (${error instanceof Error ? error.message : String(error)}); update @flagstaff/sdk.`,
        );
      }
      const previous = this.state;
      this.state = next;
      this.resolver = resolverOf(next, this.now, this.random);
      this.currentVersion = data.version as number;
      this.stateForResume = true;
      this.settleReady();
      if (previous) {
        const flags = changedFlags(previous, next);
        if (flags.length > 0) this.emit("change", { version: this.currentVersion, flags, snapshot: true });
      }
      return;
    }
    if (message.event !== "change") return;
    const state = this.state;
    if (!state || !this.stateForResume) throw new Error("a change before any snapshot");
    const data = parseData(message);
    const version = data.version as number;
    if (version <= this.currentVersion) return;
    const changes = data.changes as { kind: string }[];
    if (!Array.isArray(changes)) throw new Error("a change event without changes");
    const unknown = changes.find((change) => !isProjectChange(change));
    if (unknown) {
      throw new FatalStreamError(
        `The stream sent a change of kind ${JSON.stringify(unknown.kind)}, which this SDK does not know; update @flagstaff/sdk.`,
      );
    }
    const flags = new Set<string>();
    for (const change of changes as ProjectChange[]) {
      const touched = this.flagsTouched(state, change);
      if (state.apply(change)) for (const name of touched) flags.add(name);
    }
    this.currentVersion = version;
    if (flags.size > 0) this.emit("change", { version, flags: [...flags].sort(), snapshot: false });
  }

  /** The flags a change may make answer differently, read before it is applied. */
  private flagsTouched(state: ProjectState, change: ProjectChange): string[] {
    switch (change.kind) {
      case "flag.upserted":
        return withDependents(state, [change.flag.name]);
      case "flag.deleted":
      case "flag.variants": {
        const name = state.flagsById.get(change.id)?.name;
        return name === undefined ? [] : withDependents(state, [name]);
      }
      case "segment.members":
      case "segment.deleted":
      case "segment.conditions": {
        const segmentId = change.segmentId;
        const named = [...state.flagsById.values()]
          .filter((flag) => dependenciesOf(flag).segments.includes(segmentId))
          .map((flag) => flag.name);
        return withDependents(state, named);
      }
    }
  }
}

/** The flags named and every flag that has one of them as a prerequisite, directly or through others. */
function withDependents(state: ProjectState, names: readonly string[]): string[] {
  const found = new Set(names);
  let grew = true;
  while (grew) {
    grew = false;
    for (const flag of state.flagsById.values()) {
      if (!found.has(flag.name) && dependenciesOf(flag).flags.some((name) => found.has(name))) {
        found.add(flag.name);
        grew = true;
      }
    }
  }
  return [...found];
}

/**
 * Starts evaluating a project's flags in this process: loads the state from the project stream, follows
 * it, reconnects with backoff and `Last-Event-ID`, and polls when streaming is blocked. `await
 * evaluator.ready()` before the first evaluation; `close()` when done.
 */
export function createLocalEvaluator(options: LocalEvaluatorOptions): LocalEvaluator {
  return new LocalEvaluator(options);
}
