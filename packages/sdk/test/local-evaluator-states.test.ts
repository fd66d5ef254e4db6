import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { STATE_FORMAT } from "@flagstaff/core";
import { ManualClock } from "@flagstaff/test-harness";
import {
  createLocalEvaluator,
  type FetchLike,
  type LocalEvaluator,
  type LocalEvaluatorError,
  type LocalEvaluatorOptions,
  type LocalEvaluatorStatus,
} from "../src/index.js";

// Fast tests of the local evaluator's connection state machine, without a server: a fake transport that
// answers each stream request as the test says (a status, an event stream the test writes to, or a
// network failure) and a manual clock for every delay and timeout, so a backoff of seconds passes at once.

/** One request the evaluator made, for the test to answer. */
class FakeRequest {
  constructor(
    readonly headers: Record<string, string>,
    readonly signal: AbortSignal,
    private readonly resolve: (response: Response) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** Answers with a status and a body (a problem, a proxy's page). */
  respond(status: number, body: string, contentType = "application/problem+json"): void {
    this.resolve(new Response(body, { status, headers: { "content-type": contentType } }));
  }

  /** The connection fails before any answer. */
  fail(): void {
    this.reject(new TypeError("fetch failed"));
  }

  /** Answers 200 with an event stream the test writes to; the request's signal errors it, as fetch's would. */
  open(): FakeStream {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
    });
    const stream = new FakeStream(controller);
    this.signal.addEventListener("abort", () => stream.error(new DOMException("aborted", "AbortError")), {
      once: true,
    });
    this.resolve(new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }));
    return stream;
  }
}

class FakeStream {
  private over = false;
  constructor(private readonly controller: ReadableStreamDefaultController<Uint8Array>) {}

  send(event: string, data: unknown, id?: number): void {
    const lines = `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    this.controller.enqueue(new TextEncoder().encode(lines));
  }

  end(): void {
    if (this.over) return;
    this.over = true;
    this.controller.close();
  }

  error(error: unknown): void {
    if (this.over) return;
    this.over = true;
    this.controller.error(error);
  }
}

/** A fetch whose requests wait for the test: `next()` answers the next request made, in order. */
class FakeTransport {
  readonly requests: FakeRequest[] = [];
  private taken = 0;
  private waiting: (() => void) | undefined;

  readonly fetch: FetchLike = (_url, init) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal as AbortSignal;
      signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")), { once: true });
      this.requests.push(new FakeRequest({ ...(init.headers as Record<string, string>) }, signal, resolve, reject));
      this.waiting?.();
    });

  async next(): Promise<FakeRequest> {
    while (this.requests.length <= this.taken) {
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
    return this.requests[this.taken++]!;
  }
}

const snapshot = (version: number, status: "enabled" | "disabled") => ({
  version,
  state: {
    format: STATE_FORMAT,
    flags: [{ id: "f1", name: "beta", status, percentageActors: 0, percentageCalls: 0, actors: [], segments: [] }],
    segments: {},
  },
});

const setStatus = (version: number, status: "enabled" | "disabled") => ({
  version,
  changes: [
    {
      kind: "flag.upserted",
      flag: { id: "f1", name: "beta", status, percentageActors: 0, percentageCalls: 0 },
      addActors: [],
      removeActors: [],
      addSegments: [],
      removeSegments: [],
    },
  ],
});

const problem = (status: number, code: string) => JSON.stringify({ type: "about:blank", title: code, status, code });

/** An evaluator on a fake transport and a manual clock, and everything it emits. */
function start(options: Partial<LocalEvaluatorOptions> = {}) {
  const transport = new FakeTransport();
  const clock = new ManualClock();
  const evaluator = createLocalEvaluator({
    // The transport's own requests only: usage reports are usage.test.ts's.
    reportUsage: false,
    url: "http://flagstaff.test",
    key: "fs_read_key",
    projectId: "p",
    fetch: transport.fetch,
    timers: clock,
    ...options,
  });
  const statuses: LocalEvaluatorStatus[] = [];
  const errors: LocalEvaluatorError[] = [];
  evaluator.on("status", (status) => statuses.push(status));
  evaluator.on("error", (error) => errors.push(error));
  return { evaluator, transport, clock, statuses, errors };
}

/** Resolves when the evaluator reaches `status` (at once if it is there). */
function reaches(evaluator: LocalEvaluator, status: LocalEvaluatorStatus): Promise<void> {
  if (evaluator.status === status) return Promise.resolve();
  return new Promise((resolve) => {
    const off = evaluator.on("status", (now) => {
      if (now === status) {
        off();
        resolve();
      }
    });
  });
}

/** Resolves with the next error the evaluator reports. */
function nextError(evaluator: LocalEvaluator): Promise<LocalEvaluatorError> {
  return new Promise((resolve) => {
    const off = evaluator.on("error", (error) => {
      off();
      resolve(error);
    });
  });
}

describe("local evaluator states (fake transport, manual clock)", () => {
  test("connecting, then streaming from a snapshot; changes apply; the end of a long stream reconnects with Last-Event-ID", async () => {
    const { evaluator, transport, clock, statuses, errors } = start();
    assert.equal(evaluator.status, "connecting");
    const first = await transport.next();
    assert.equal(first.headers.authorization, "Bearer fs_read_key");
    assert.equal(first.headers["last-event-id"], undefined, "nothing to resume from yet");
    const stream = first.open();
    stream.send("snapshot", snapshot(3, "enabled"), 3);
    await evaluator.ready();
    assert.equal(evaluator.status, "streaming");
    assert.equal(evaluator.version, 3);
    assert.equal(evaluator.isEnabled("beta"), true);
    const changed = new Promise((resolve) => evaluator.on("change", resolve));
    stream.send("change", setStatus(4, "disabled"), 4);
    assert.deepEqual(await changed, { version: 4, flags: ["beta"], snapshot: false });
    assert.equal(evaluator.isEnabled("beta"), false);

    // Open longer than shortStreamMs and something received: an ordinary end, retried after backoff(0).
    clock.advance(10_000);
    const reconnecting = reaches(evaluator, "reconnecting");
    stream.end();
    await reconnecting;
    const delay = clock.nextTimerIn()!;
    assert.ok(delay >= 250 && delay <= 500, `first delay ${delay} ms is within [250, 500]`);
    clock.advance(delay);
    const second = await transport.next();
    assert.equal(second.headers["last-event-id"], "4", "resumes from the version it has");
    second.open().send("change", setStatus(5, "disabled"), 5);
    await reaches(evaluator, "streaming");
    assert.deepEqual(statuses, ["streaming", "reconnecting", "streaming"]);
    assert.deepEqual(errors, [], "an ordinary end is not an error");
    await evaluator.close();
  });

  test("429, 503 and network failures are retried with a doubling backoff, capped; the first snapshot still readies it", async () => {
    const { evaluator, transport, clock, errors } = start({ retryDelayMs: 100, maxRetryDelayMs: 1000 });
    const failures: ((request: FakeRequest) => void)[] = [
      (r) => r.respond(503, problem(503, "unavailable")),
      (r) => r.respond(429, problem(429, "rate_limited")),
      (r) => r.fail(),
      (r) => r.respond(503, problem(503, "unavailable")),
      (r) => r.respond(503, problem(503, "unavailable")),
    ];
    const ceilings = [100, 200, 400, 800, 1000];
    for (const [i, fail] of failures.entries()) {
      const reported = nextError(evaluator);
      fail(await transport.next());
      const { error, fatal } = await reported;
      assert.equal(fatal, false);
      await reaches(evaluator, "reconnecting");
      const delay = clock.nextTimerIn()!;
      const ceiling = ceilings[i]!;
      assert.ok(
        delay >= ceiling / 2 && delay <= ceiling,
        `delay ${i + 1}: ${delay} ms within [${ceiling / 2}, ${ceiling}]`,
      );
      assert.equal(evaluator.isReady, false);
      if (i === 2) assert.equal(error.code, "network_error");
      else assert.equal(error.status, i === 1 ? 429 : 503);
      clock.advance(delay);
    }
    (await transport.next()).open().send("snapshot", snapshot(1, "enabled"), 1);
    await evaluator.ready();
    assert.equal(evaluator.status, "streaming");
    assert.equal(errors.length, 5);
    await evaluator.close();
  });

  for (const status of [401, 403, 404]) {
    test(`${status} stops it: fatal error, ready() rejects, no retry is scheduled`, async () => {
      const { evaluator, transport, clock, errors } = start();
      const ready = evaluator.ready();
      (await transport.next()).respond(status, problem(status, `refused_${status}`));
      await assert.rejects(ready, (error: { status: number }) => error.status === status);
      assert.equal(evaluator.status, "stopped");
      assert.equal(evaluator.error?.status, status);
      assert.deepEqual(
        errors.map((e) => [e.fatal, e.error.code]),
        [[true, `refused_${status}`]],
      );
      assert.equal(clock.pendingTimers, 0, "no timer left: nothing is retried");
      assert.equal(transport.requests.length, 1);
      await evaluator.close();
    });
  }

  test("after a stop it answers from the last state it had (stale), and says why it stopped", async () => {
    const { evaluator, transport, clock } = start();
    const stream = (await transport.next()).open();
    stream.send("snapshot", snapshot(1, "enabled"), 1);
    await evaluator.ready();
    clock.advance(10_000);
    stream.end();
    await reaches(evaluator, "reconnecting");
    clock.advance(clock.nextTimerIn()!);
    (await transport.next()).respond(401, problem(401, "unauthorized"));
    await reaches(evaluator, "stopped");
    assert.equal(evaluator.isEnabled("beta"), true, "the last state still answers");
    assert.equal(evaluator.error?.code, "unauthorized");
    await evaluator.close();
  });

  test("a connection with no answer times out after connectTimeoutMs; a silent stream after idleTimeoutMs", async () => {
    const { evaluator, transport, clock } = start({ connectTimeoutMs: 2000, idleTimeoutMs: 5000 });
    await transport.next(); // never answered
    let reported = nextError(evaluator);
    clock.advance(2000);
    const timeout = await reported;
    assert.equal(timeout.error.code, "timeout");
    assert.match(timeout.error.message, /within 2000 ms/);
    await reaches(evaluator, "reconnecting");
    clock.advance(clock.nextTimerIn()!);
    const stream = (await transport.next()).open();
    stream.send("snapshot", snapshot(1, "enabled"), 1);
    await evaluator.ready();
    reported = nextError(evaluator);
    clock.advance(5000);
    const idle = await reported;
    assert.equal(idle.error.code, "timeout");
    assert.match(idle.error.message, /silent for 5000 ms/);
    await reaches(evaluator, "reconnecting");
    await evaluator.close();
  });

  test("streams blocked or cut short pollAfterFailures times in a row switch to polling, then back to streaming", async () => {
    const { evaluator, transport, clock, statuses } = start({
      pollAfterFailures: 2,
      pollIntervalMs: 30_000,
      streamRetryPolls: 1,
      shortStreamMs: 5000,
    });
    // A proxy answers 200 with a page: streaming is blocked on the way.
    const blocked = nextError(evaluator);
    (await transport.next()).respond(200, "<html>proxy</html>", "text/html");
    assert.equal((await blocked).error.code, "stream_blocked");
    await reaches(evaluator, "reconnecting");
    clock.advance(clock.nextTimerIn()!);
    // A stream cut short: opened, a snapshot, ended within shortStreamMs.
    const short = (await transport.next()).open();
    short.send("snapshot", snapshot(1, "enabled"), 1);
    await evaluator.ready();
    short.end();
    await reaches(evaluator, "polling");
    // A poll: the stream reopened, what it sends at once taken, closed shortly after.
    const poll = await transport.next();
    assert.equal(poll.headers["last-event-id"], "1");
    poll.open().send("change", setStatus(2, "disabled"), 2);
    await new Promise((resolve) => evaluator.on("change", resolve));
    clock.advance(200); // the quiet after the burst closes the poll
    await waitUntil(() => clock.nextTimerIn() === 30_000);
    clock.advance(30_000);
    // streamRetryPolls polls done: it streams again.
    const resumed = new Promise((resolve) => evaluator.on("change", resolve));
    (await transport.next()).open().send("change", setStatus(3, "enabled"), 3);
    await resumed;
    assert.deepEqual(statuses, ["reconnecting", "streaming", "reconnecting", "polling", "streaming"]);
    assert.equal(evaluator.version, 3);
    await evaluator.close();
  });

  test("a change of a kind it does not know stops it; something malformed starts over from a snapshot", async () => {
    const { evaluator, transport, clock } = start();
    const stream = (await transport.next()).open();
    stream.send("snapshot", snapshot(1, "enabled"), 1);
    await evaluator.ready();
    let reported = nextError(evaluator);
    stream.send("change", { version: 2 }, 2); // no changes
    const malformed = await reported;
    assert.deepEqual([malformed.fatal, malformed.error.code], [false, "invalid_response"]);
    await reaches(evaluator, "reconnecting");
    clock.advance(clock.nextTimerIn()!);
    const again = await transport.next();
    assert.equal(again.headers["last-event-id"], undefined, "the state is not trusted: a snapshot, not a resume");
    const next = again.open();
    next.send("snapshot", snapshot(2, "enabled"), 2);
    await reaches(evaluator, "streaming");
    reported = nextError(evaluator);
    next.send("change", { version: 3, changes: [{ kind: "flag.renamed" }] }, 3);
    const unknown = await reported;
    assert.deepEqual([unknown.fatal, unknown.error.code], [true, "unsupported_format"]);
    assert.equal(evaluator.status, "stopped");
    await evaluator.close();
  });

  test("close() while waiting to reconnect ends at once: closed, ready() rejects, no timer or request left", async () => {
    const { evaluator, transport, clock, statuses } = start();
    const ready = evaluator.ready();
    (await transport.next()).respond(503, problem(503, "unavailable"));
    await reaches(evaluator, "reconnecting");
    assert.equal(clock.pendingTimers, 1);
    await evaluator.close();
    await assert.rejects(ready, (error: { code: string }) => error.code === "closed");
    assert.equal(evaluator.status, "closed");
    assert.equal(clock.pendingTimers, 0);
    assert.equal(transport.requests.length, 1);
    assert.deepEqual(statuses, ["reconnecting", "closed"]);
  });

  test("close() while streaming aborts the request", async () => {
    const { evaluator, transport } = start();
    const request = await transport.next();
    request.open().send("snapshot", snapshot(1, "enabled"), 1);
    await evaluator.ready();
    await evaluator.close();
    assert.equal(request.signal.aborted, true);
    assert.equal(evaluator.status, "closed");
  });
});

/** Waits a turn of the event loop at a time until `condition` holds (the poll's close goes through a few). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let turns = 0; !condition(); turns++) {
    if (turns > 1000) throw new Error("the condition never held");
    await new Promise((resolve) => setImmediate(resolve));
  }
}
