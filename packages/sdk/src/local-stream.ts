import { FlagstaffError, isProblemDetails } from "./errors.js";
import { readEventStream, type StreamEnd, type StreamMessage } from "./event-stream.js";
import type { FetchLike } from "./http.js";
import { FatalStreamError } from "./local-state.js";
import type { Timers } from "./timers.js";

// The local evaluator's transport: it follows the project's stream, reconnects with backoff (resuming
// with Last-Event-ID), and polls when streaming is blocked on the way. What the events say is the host's
// (the evaluator's) to apply.

/**
 * Where a local evaluator stands. `connecting`: no stream yet; `streaming`: following the stream;
 * `reconnecting`: the stream dropped, waiting to resume; `polling`: streaming is blocked on the way, the
 * stream is reopened briefly every `pollIntervalMs`; `stopped`: a fatal error (see `error`); `closed`.
 */
export type LocalEvaluatorStatus = "connecting" | "streaming" | "reconnecting" | "polling" | "stopped" | "closed";

/** The transport's delays, timeouts and thresholds (LocalEvaluatorOptions' of the same names, defaulted). */
export interface StreamSettings {
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly shortStreamMs: number;
  readonly pollAfterFailures: number;
  readonly pollIntervalMs: number;
  readonly pollWindowMs: number;
  readonly streamRetryPolls: number;
}

/** What the transport asks of the evaluator it feeds. */
export interface StreamHost {
  /** Whether the evaluator is closed or stopped: the transport ends. */
  readonly done: boolean;
  /** The headers of the next request (Last-Event-ID when it may resume). */
  headers(): Record<string, string>;
  /** Applies one event; throws on anything it cannot trust (the stream then starts over). */
  handle(message: StreamMessage): void;
  setStatus(status: LocalEvaluatorStatus): void;
  /** An error that is retried. */
  report(error: FlagstaffError): void;
  /** A fatal error: the evaluator stops. */
  stop(error: FlagstaffError): void;
  /** The stream sent something unexpected: the next request starts over from a snapshot. */
  distrust(): void;
}

/** Follows a project's stream for a host until the host is done or `abort()`; starts at once. */
export class StreamFollower {
  private readonly attempt = new AbortController();
  private wake: (() => void) | undefined;
  private sleepTimer: unknown;
  /** Resolves when the transport has ended. */
  readonly running: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly fetch: FetchLike,
    private readonly timers: Timers,
    private readonly settings: StreamSettings,
    private readonly host: StreamHost,
  ) {
    this.running = this.run();
  }

  /** Ends the connection and every timer (the host is done already). */
  abort(): void {
    this.attempt.abort();
    this.interruptSleep();
  }

  /** Waits, unless `abort()` comes first. */
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
    const base = { method: "GET", url: this.url };
    switch (end.kind) {
      case "ended":
      case "aborted":
        return undefined;
      case "idle":
      case "timeout": {
        const detail =
          end.kind === "idle"
            ? `The stream ${this.url} was silent for ${this.settings.idleTimeoutMs} ms.`
            : `No answer from ${this.url} within ${this.settings.connectTimeoutMs} ms.`;
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
            detail: `GET ${this.url} failed: ${cause?.message ?? String(end.error)}${inner}`,
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
            detail: `GET ${this.url} answered ${end.status} with ${JSON.stringify(end.contentType)}, not an event stream: something on the way blocks streaming.`,
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
          detail: typeof problem?.detail === "string" ? problem.detail : `GET ${this.url} answered ${end.status}.`,
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
    while (!this.host.done) {
      if (blocked >= this.settings.pollAfterFailures) {
        blocked = await this.poll();
        continue;
      }
      let openedAt: number | undefined;
      let received = false;
      const end = await readEventStream({
        url: this.url,
        headers: this.host.headers(),
        fetch: this.fetch,
        signal: this.attempt.signal,
        timers: this.timers,
        connectTimeoutMs: this.settings.connectTimeoutMs,
        idleTimeoutMs: this.settings.idleTimeoutMs,
        onOpen: () => {
          openedAt = this.timers.now();
          this.host.setStatus("streaming");
        },
        onMessage: (message) => {
          this.host.handle(message);
          received = true;
        },
      });
      if (this.host.done) break;
      const problem = this.classify(end);
      if (problem?.fatal) {
        this.host.stop(problem.error);
        break;
      }
      if (received) failures = 0;
      const cutShort = openedAt !== undefined && this.timers.now() - openedAt < this.settings.shortStreamMs;
      if (end.kind === "not_event_stream" || (cutShort && end.kind !== "failed")) blocked++;
      else if (openedAt !== undefined) blocked = 0;
      // Start over from a snapshot: the state can no longer be trusted.
      if (end.kind === "failed") this.host.distrust();
      if (problem) this.host.report(problem.error);
      this.host.setStatus("reconnecting");
      if (blocked >= this.settings.pollAfterFailures) continue;
      await this.sleep(received && !cutShort ? this.backoff(0) : this.backoff(failures++));
    }
  }

  /**
   * Polling mode: reopens the stream every `pollIntervalMs`, takes what it sends at once (the changes since
   * `version`, or a snapshot) and closes it. After `streamRetryPolls` polls it answers 0, to try streaming.
   */
  private async poll(): Promise<number> {
    this.host.setStatus("polling");
    for (let polls = 0; polls < this.settings.streamRetryPolls && !this.host.done; polls++) {
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
        url: this.url,
        headers: this.host.headers(),
        fetch: this.fetch,
        signal: window.signal,
        timers,
        connectTimeoutMs: this.settings.connectTimeoutMs,
        idleTimeoutMs: 0,
        onOpen: () => {
          openTimer = timers.setTimeout(() => window.abort(), this.settings.pollWindowMs);
        },
        onMessage: (message) => {
          this.host.handle(message);
          // What the server has at once comes in one burst: close shortly after it.
          if (quiet !== undefined) timers.clearTimeout(quiet);
          quiet = timers.setTimeout(() => window.abort(), 200);
        },
      });
      timers.clearTimeout(windowTimer);
      if (openTimer !== undefined) timers.clearTimeout(openTimer);
      if (quiet !== undefined) timers.clearTimeout(quiet);
      this.attempt.signal.removeEventListener("abort", onClose);
      if (this.host.done) break;
      const problem = this.classify(end);
      if (problem?.fatal) {
        this.host.stop(problem.error);
        break;
      }
      if (end.kind === "failed") this.host.distrust();
      if (problem) this.host.report(problem.error);
      await this.sleep(this.settings.pollIntervalMs);
    }
    return 0;
  }
}
