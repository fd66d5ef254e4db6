import { createParser, type EventSourceMessage } from "eventsource-parser";
import { track } from "./cleanup.js";
import { ADMIN_KEY } from "./http.js";
import { waitFor } from "./wait.js";

export interface StreamEvent {
  readonly event: string;
  readonly id: string | undefined;
  readonly data: any;
}

export interface OpenStreamOptions {
  /** API key; defaults to the admin key. Pass null to send no Authorization header (a token in the URL). */
  readonly key?: string | null;
  readonly lastEventId?: string;
  readonly headers?: Record<string, string>;
}

/**
 * A server-sent event stream read over real HTTP and parsed with eventsource-parser: every event in
 * arrival order (comments counted apart), and whether the server ended it. Tracked: closed when the test
 * file ends.
 */
export class EventStreamClient {
  readonly events: StreamEvent[] = [];
  comments = 0;
  status = 0;
  headers: Headers | undefined;
  /** Resolves when the server ends the stream (or it is closed here). */
  readonly ended: Promise<void>;
  private endedNow = false;
  private readonly abort = new AbortController();
  private untrack: () => void = () => {};
  private resolveEnded: () => void = () => {};

  private constructor() {
    this.ended = new Promise((resolve) => {
      this.resolveEnded = () => {
        this.endedNow = true;
        resolve();
      };
    });
  }

  get isEnded(): boolean {
    return this.endedNow;
  }

  static async open(url: string, options: OpenStreamOptions = {}): Promise<EventStreamClient> {
    const client = new EventStreamClient();
    client.untrack = track({ label: `event stream ${url}`, dispose: () => client.close() });
    const response = await fetch(url, {
      headers: {
        accept: "text/event-stream",
        ...(options.key === null ? {} : { authorization: `Bearer ${options.key ?? ADMIN_KEY}` }),
        ...(options.lastEventId === undefined ? {} : { "last-event-id": options.lastEventId }),
        ...(options.headers ?? {}),
      },
      signal: client.abort.signal,
    });
    client.status = response.status;
    client.headers = response.headers;
    if (!response.ok || !response.body) {
      client.events.push({ event: "error", id: undefined, data: await response.json().catch(() => undefined) });
      client.resolveEnded();
      return client;
    }
    const parser = createParser({
      onEvent: (message: EventSourceMessage) =>
        client.events.push({ event: message.event ?? "message", id: message.id, data: JSON.parse(message.data) }),
      onComment: () => {
        client.comments++;
      },
    });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
      } catch {
        // aborted here, or the connection dropped: either way the stream is over
      }
      client.resolveEnded();
    })();
    return client;
  }

  /** Waits until an event matches (default 10 s), and answers it. */
  async next(what: string, match: (event: StreamEvent) => boolean, timeoutMs = 10_000): Promise<StreamEvent> {
    return (await waitFor(what, () => this.events.find(match), { timeoutMs })) as StreamEvent;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.ended;
    this.untrack();
  }
}
