import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { FetchLike } from "./http.js";
import { systemTimers, type Timers } from "./timers.js";

/** One server-sent event: its type (`message` when unnamed), its id, and its data as text. */
export interface StreamMessage {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: string;
}

/** One request for an event stream. */
export interface EventStreamRequest {
  url: string;
  headers: Record<string, string>;
  fetch: FetchLike;
  /** Ends the stream from outside; the read then ends with `aborted`. */
  signal: AbortSignal;
  /** Milliseconds to wait for the answer's headers (0: no limit). */
  connectTimeoutMs: number;
  /** Milliseconds without an event or a comment after which the stream counts as dead (0: no limit). */
  idleTimeoutMs: number;
  /** Called once the server answered 2xx with `text/event-stream`. */
  onOpen?: () => void;
  /** Called for each event, in order. If it throws, the stream is closed and the read ends with `failed`. */
  onMessage: (message: StreamMessage) => void;
  /** Called for each comment (`: keep-alive`). */
  onComment?: () => void;
  /** The timers of the two timeouts (default: the global ones). */
  timers?: Timers;
}

/** How reading an event stream ended. */
export type StreamEnd =
  /** The server ended the stream. */
  | { readonly kind: "ended" }
  /** The request's signal ended it. */
  | { readonly kind: "aborted" }
  /** Nothing arrived for `idleTimeoutMs`. */
  | { readonly kind: "idle" }
  /** No answer's headers within `connectTimeoutMs`. */
  | { readonly kind: "timeout" }
  /** No answer, or the connection broke. */
  | { readonly kind: "network"; readonly error: unknown }
  /** A non-2xx answer, with its body as text. */
  | { readonly kind: "http"; readonly status: number; readonly body: string }
  /** A 2xx answer that is not an event stream (a proxy's page, say): streaming is blocked on the way. */
  | { readonly kind: "not_event_stream"; readonly status: number; readonly contentType: string }
  /** `onMessage` threw this. */
  | { readonly kind: "failed"; readonly error: unknown };

/**
 * Requests an event stream with `fetch` and reads it with eventsource-parser until it ends; never throws.
 * Works wherever `fetch` streams response bodies (Node.js 18+, browsers).
 */
export async function readEventStream(request: EventStreamRequest): Promise<StreamEnd> {
  const controller = new AbortController();
  let why: "aborted" | "idle" | "timeout" | undefined;
  const stop = (reason: "aborted" | "idle" | "timeout") => {
    why ??= reason;
    controller.abort();
  };
  const onAbort = () => stop("aborted");
  if (request.signal.aborted) return { kind: "aborted" };
  request.signal.addEventListener("abort", onAbort, { once: true });
  const timers = request.timers ?? systemTimers;
  let timer: unknown;
  const arm = (ms: number, reason: "idle" | "timeout") => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = ms > 0 && Number.isFinite(ms) ? timers.setTimeout(() => stop(reason), ms) : undefined;
  };
  const ended = (): StreamEnd => ({ kind: why ?? "aborted" });
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    arm(request.connectTimeoutMs, "timeout");
    let response: Response;
    try {
      response = await request.fetch(request.url, {
        method: "GET",
        headers: request.headers,
        signal: controller.signal,
        cache: "no-store",
      });
    } catch (error) {
      return why !== undefined ? ended() : { kind: "network", error };
    }
    if (response.status < 200 || response.status > 299) {
      const body = await response.text().catch(() => "");
      return why !== undefined ? ended() : { kind: "http", status: response.status, body };
    }
    const contentType = response.headers.get("content-type") ?? "";
    if (!/^text\/event-stream\b/i.test(contentType) || !response.body) {
      await response.body?.cancel().catch(() => {});
      return { kind: "not_event_stream", status: response.status, contentType };
    }
    arm(request.idleTimeoutMs, "idle");
    request.onOpen?.();
    let failure: { error: unknown } | undefined;
    const parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        if (failure) return;
        try {
          request.onMessage({ event: message.event ?? "message", id: message.id, data: message.data });
        } catch (error) {
          failure = { error };
        }
      },
      onComment: () => request.onComment?.(),
    });
    reader = response.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm(request.idleTimeoutMs, "idle");
        parser.feed(decoder.decode(value, { stream: true }));
        if (failure) {
          await reader.cancel().catch(() => {});
          return { kind: "failed", error: failure.error };
        }
      }
    } catch (error) {
      return why !== undefined ? ended() : { kind: "network", error };
    }
    return why !== undefined ? ended() : { kind: "ended" };
  } finally {
    if (timer !== undefined) timers.clearTimeout(timer);
    request.signal.removeEventListener("abort", onAbort);
    // Whatever the outcome, the connection goes: nothing is left reading.
    controller.abort();
    await reader?.cancel().catch(() => {});
  }
}
