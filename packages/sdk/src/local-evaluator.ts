import { failedResolution } from "@flagstaff/core";
import { FlagstaffError } from "./errors.js";
import type { StreamMessage } from "./event-stream.js";
import type { FetchLike } from "./http.js";
import { type LocalEvaluation, type LocalEvaluationContext, StateEvaluations } from "./local-evaluation.js";
import { applyChanges, changedFlags, readSnapshot } from "./local-state.js";
import { type LocalEvaluatorStatus, StreamFollower } from "./local-stream.js";
import { systemTimers, type Timers } from "./timers.js";
import { UsageReporter } from "./usage-reporter.js";

// The local evaluator: what its callers see (options, events, readiness, evaluate, close). Its transport
// (the stream, reconnections, polling) is local-stream.ts; what it makes of the stream's snapshots and
// changes, local-state.ts; its evaluation, local-evaluation.ts.

export type { LocalEvaluation, LocalEvaluationContext, LocalEvaluationErrorCode } from "./local-evaluation.js";
export { FatalStreamError } from "./local-state.js";
export type { LocalEvaluatorStatus } from "./local-stream.js";

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
  /**
   * Ask the server for a compressed stream (`Flagstaff-Stream-Encoding: gzip`: each event a gzip member
   * of its own, a snapshot a small part of its size). Default: on in Node.js with the default fetch,
   * whose decompression reads every member; off in browsers (Chromium reads only the first) and with a
   * fetch of your own, unless you set it.
   */
  compressStream?: boolean;
  /**
   * Report how many evaluations each flag answered with each variant, every minute, so that the
   * console's usage chart and the stale rules see them (docs/usage.md). Default true. Evaluations never
   * wait for a report.
   */
  reportUsage?: boolean;
  /** Milliseconds between usage reports (default 60000). */
  usageIntervalMs?: number;
}

/** Evaluation errors that no flag answered: not counted as usage. */
const UNCOUNTED: ReadonlySet<string> = new Set(["FLAG_NOT_FOUND", "PROVIDER_NOT_READY", "INVALID_CONTEXT"]);

/** Whether this runs on Node.js, whose fetch (undici) decompresses a gzip body of several members. */
const onNode = typeof process !== "undefined" && typeof process.versions?.node === "string";

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
 * Evaluates a project's flags in this process: it loads the project's state from the stream
 * (`GET /projects/{projectId}/stream`), follows its changes, and answers `evaluate` synchronously from
 * memory with the server's own rules (`evaluateFlag`, `resolutionOf` and `ProjectState` from `@flagstaff/core`). The call
 * rollout is drawn here. Create one with `createLocalEvaluator`; it starts at once.
 */
export class LocalEvaluator {
  /** The project's state and its evaluations (undefined until the first snapshot). */
  private evaluations: StateEvaluations | undefined;
  private currentVersion = 0;
  private currentStatus: LocalEvaluatorStatus = "connecting";
  private fatal: FlagstaffError | undefined;
  private lastError: FlagstaffError | undefined;
  /** Whether the next request may resume from `version` (false after the stream sent something unexpected). */
  private stateForResume = true;
  private readonly listeners = new Map<keyof LocalEvaluatorEvents, Set<(value: never) => void>>();
  private readonly readyPromise: Promise<void>;
  private settleReady: (error?: Error) => void = () => {};
  private readonly streamUrl: string;
  private readonly fetchImpl: FetchLike;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly timers: Timers;
  private readonly follower: StreamFollower;
  private readonly usage: UsageReporter | undefined;

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
    const settings = {
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
    if (options.reportUsage !== false) {
      const base = options.url.replace(/\/+$/, "");
      this.usage = new UsageReporter({
        url: `${base}/projects/${encodeURIComponent(options.projectId)}/usage`,
        fetch: this.fetchImpl,
        headers: () => ({ ...(options.headers ?? {}), authorization: `Bearer ${options.key}` }),
        timers: this.timers,
        intervalMs: options.usageIntervalMs ?? 60_000,
        onError: (error) =>
          this.report(
            new FlagstaffError({
              status: 0,
              code: "usage_report_failed",
              detail: `Usage not reported: ${error.message}`,
            }),
          ),
      });
    }
    // ready() hands out its own promises; this one must not count as an unhandled rejection.
    this.readyPromise.catch(() => {});
    const done = () => this.done;
    this.follower = new StreamFollower(this.streamUrl, this.fetchImpl, this.timers, settings, {
      get done() {
        return done();
      },
      headers: () => this.headers(),
      handle: (message) => this.handle(message),
      setStatus: (status) => this.setStatus(status),
      report: (error) => this.report(error),
      stop: (error) => this.stop(error),
      distrust: () => {
        this.stateForResume = false;
      },
    });
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
    return this.evaluations !== undefined;
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
    const evaluations = this.evaluations;
    if (evaluations === undefined) {
      return failedResolution(
        "PROVIDER_NOT_READY",
        this.fatal
          ? `The local evaluator stopped before it loaded the state: ${this.fatal.message}`
          : "The local evaluator has not loaded the project's state yet (await ready()).",
      );
    }
    const evaluation = evaluations.evaluate(flagName, context);
    // Counted as the server counts: every evaluation of a flag, those the engine failed as `(error)`; not
    // an unknown flag or a refused context, which no flag answered.
    if (this.usage !== undefined && (evaluation.reason !== "ERROR" || !UNCOUNTED.has(evaluation.errorCode)))
      this.usage.count(flagName, evaluation.variant, this.now());
    return evaluation;
  }

  /** Sends the evaluations counted so far now rather than at the next report (it is done every minute, and at close). */
  flushUsage(): Promise<void> {
    return this.usage?.flush() ?? Promise.resolve();
  }

  /** Whether a flag is on (serves anything but its offVariant): `evaluate(...).enabled` (false for an unknown flag). */
  isEnabled(flagName: string, context: readonly string[] | LocalEvaluationContext = []): boolean {
    return this.evaluate(flagName, context).enabled;
  }

  /** The names of the project's flags, in order (empty until ready). */
  flagNames(): readonly string[] {
    return this.evaluations?.state.flagNamesInOrder() ?? [];
  }

  /** Stops following the project: the connection and every timer go. Evaluations go on answering the last state. */
  async close(): Promise<void> {
    if (this.currentStatus !== "closed") {
      this.setStatus("closed");
      this.settleReady(new FlagstaffError({ status: 0, code: "closed", detail: "The local evaluator was closed." }));
      this.follower.abort();
    }
    await this.follower.running;
    await this.usage?.close();
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
    // The key was refused or the project is gone: a report by the clock could only be refused too.
    this.usage?.halt();
    this.setStatus("stopped");
    this.settleReady(error);
    this.emit("error", { error, fatal: true });
  }

  private headers(): Record<string, string> {
    return {
      ...(this.options.headers ?? {}),
      accept: "text/event-stream",
      authorization: `Bearer ${this.options.key}`,
      ...(this.evaluations && this.stateForResume ? { "last-event-id": String(this.currentVersion) } : {}),
      ...((this.options.compressStream ?? (onNode && this.options.fetch === undefined))
        ? { "flagstaff-stream-encoding": "gzip" }
        : {}),
    };
  }

  /** Applies one event of the stream. Throws on anything it cannot trust (the stream then starts over). */
  private handle(message: StreamMessage): void {
    if (this.currentStatus === "closed") return;
    if (message.event === "snapshot") {
      const { state: next, version } = readSnapshot(message);
      const previous = this.evaluations?.state;
      this.evaluations = new StateEvaluations(next, this.now, this.random);
      this.currentVersion = version;
      this.stateForResume = true;
      this.settleReady();
      if (previous) {
        const flags = changedFlags(previous, next);
        if (flags.length > 0) this.emit("change", { version: this.currentVersion, flags, snapshot: true });
      }
      return;
    }
    if (message.event !== "change") return;
    const state = this.evaluations?.state;
    if (!state || !this.stateForResume) throw new Error("a change before any snapshot");
    const applied = applyChanges(state, this.currentVersion, message);
    if (applied === undefined) return;
    this.currentVersion = applied.version;
    if (applied.flags.length > 0)
      this.emit("change", { version: applied.version, flags: applied.flags, snapshot: false });
  }
}

/**
 * Starts evaluating a project's flags in this process: loads the state from the project stream, follows
 * it, reconnects with backoff and `Last-Event-ID`, and polls when streaming is blocked. `await
 * evaluator.ready()` before the first evaluation; `close()` when done.
 */
export function createLocalEvaluator(options: LocalEvaluatorOptions): LocalEvaluator {
  return new LocalEvaluator(options);
}
