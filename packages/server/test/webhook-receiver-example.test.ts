// docs/examples/webhook-receiver.mjs, the receiver docs/history-and-webhooks.md shows, run as the page
// tells readers to run it, against a real server: it must take real deliveries and refuse forgeries.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  type ReceivedWebhook,
  startServer,
  type TestServer,
  track,
  WebhookReceiver,
  waitFor,
  withDeadline,
} from "@flagstaff/test-harness";

const EXAMPLE = fileURLToPath(new URL("../../../../docs/examples/webhook-receiver.mjs", import.meta.url));

/** The example, spawned with node; tracked, so it ends with the test file whatever happens. */
class ExampleReceiver {
  readonly child: ChildProcess;
  output = "";
  private readonly closed: Promise<void>;

  constructor(secret: string) {
    const env = { ...process.env, WEBHOOK_SECRET: secret, HOST: "127.0.0.1", PORT: "0" };
    this.child = spawn(process.execPath, [EXAMPLE], { env, stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (this.output += chunk));
    this.child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (this.output += chunk));
    this.closed = new Promise((resolve) => this.child.once("close", () => resolve()));
    const untrack = track({
      label: `webhook receiver example (pid ${this.child.pid})`,
      dispose: () => this.stop(),
      killNow: () => this.child.kill("SIGKILL"),
    });
    this.closed.then(untrack);
  }

  lines(): string[] {
    return this.output.split("\n").filter((line) => line !== "");
  }

  /** Waits for the line "listening on <url>" and answers the URL. */
  async url(): Promise<string> {
    const line = await waitFor(
      () => `the example to listen; its output: ${this.output}`,
      () => this.lines().find((l) => l.startsWith("listening on ")),
    );
    return (line as string).slice("listening on ".length);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    await withDeadline(this.closed, 5000, "the example receiver to exit").catch(async () => {
      this.child.kill("SIGKILL");
      await this.closed;
    });
  }
}

/** POSTs a captured delivery's body with its Standard Webhooks headers (or others) to a URL. */
async function replay(url: string, body: string, headers: ReceivedWebhook["headers"]): Promise<number> {
  const sent: Record<string, string> = { "content-type": "application/json" };
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const value = headers[name];
    if (typeof value === "string") sent[name] = value;
  }
  const response = await fetch(url, { method: "POST", headers: sent, body });
  await response.arrayBuffer();
  return response.status;
}

describe(`the webhook receiver example (docs/examples/webhook-receiver.mjs) [${DIALECTS[0]}]`, () => {
  let server: TestServer;
  before(async () => {
    // The example listens on 127.0.0.1, which the server refuses as a target by default.
    server = await startServer({
      dialect: DIALECTS[0] ?? "sqlite",
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" },
    });
  });
  after(() => server.close());

  test("without WEBHOOK_SECRET it says what to set and exits 2", async () => {
    const env = { ...process.env, WEBHOOK_SECRET: "" };
    const child = spawn(process.execPath, [EXAMPLE], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await withDeadline(
      new Promise<number | null>((resolve) => child.once("close", resolve)),
      10_000,
      "the example to exit",
    ).finally(() => child.kill("SIGKILL"));
    assert.equal(code, 2);
    assert.match(stderr, /Set WEBHOOK_SECRET/);
  });

  test("takes real deliveries, handles a repeat once, refuses forgeries", async () => {
    const projectId = await createProject(server);
    // First the webhook delivers to a receiver that records the exact bytes and headers of a real delivery.
    const capture = await WebhookReceiver.start();
    const created = await server.request("POST", `/projects/${projectId}/webhooks`, {
      body: { url: `${capture.url}/capture` },
    });
    assert.equal(created.status, 201, created.text);
    const { id: webhookId, secret } = created.body;
    const [captured] = await waitFor("the webhook's own webhook.created", () => capture.at("/capture"), {
      until: (r) => r.length === 1,
    });
    const real = captured as ReceivedWebhook;
    const realEvent = JSON.parse(real.body);
    assert.equal(realEvent.type, "webhook.created");

    // Then it delivers to the example, which holds the same secret.
    const example = new ExampleReceiver(secret);
    const url = await example.url();
    const moved = await server.request("PATCH", `/projects/${projectId}/webhooks/${webhookId}`, {
      body: { url: `${url}/hooks` },
    });
    assert.equal(moved.status, 200, moved.text);
    const flag = await server.request("POST", `/projects/${projectId}/flags/from-example`);
    assert.equal(flag.status, 201);
    const deliveries = await waitFor(
      "the flag.created and webhook.updated deliveries to succeed",
      async () => (await server.request("GET", `/projects/${projectId}/webhooks/${webhookId}/deliveries`)).body.data,
      { until: (rows: any[]) => rows.length === 3 && rows.every((d) => d.status === "succeeded") },
    );
    assert.deepEqual(
      deliveries.map((d: any) => [d.eventType, d.lastStatusCode]),
      [
        ["flag.created", 204],
        ["webhook.updated", 204],
        ["webhook.created", 200],
      ],
    );
    const flagEvent = deliveries[0].eventId;
    await waitFor(`the example to print ${flagEvent}`, () =>
      example.lines().includes(`${flagEvent} flag.created from-example by ADMIN_API_KEY`),
    );
    assert.ok(
      example.lines().includes(`${deliveries[1].eventId} webhook.updated ${url}/hooks by ADMIN_API_KEY`),
      example.output,
    );

    const hooks = `${url}/hooks`;
    // Forgeries: an altered body, an altered signature, no signature at all.
    const altered = real.body.replace('"enabled":true', '"enabled":false');
    assert.notEqual(altered, real.body);
    assert.equal(await replay(hooks, altered, real.headers), 400);
    const signature = String(real.headers["webhook-signature"]);
    const forged = `v1,${Buffer.alloc(32, 7).toString("base64")}`;
    assert.notEqual(forged, signature);
    assert.equal(await replay(hooks, real.body, { ...real.headers, "webhook-signature": forged }), 400);
    assert.equal(await replay(hooks, real.body, { ...real.headers, "webhook-timestamp": "1700000000" }), 400);
    assert.equal(await replay(hooks, real.body, {}), 400);
    assert.deepEqual(
      example.lines().filter((l) => l.startsWith("refused: ")),
      [
        "refused: No matching signature found",
        "refused: No matching signature found",
        "refused: Message timestamp too old",
        "refused: Missing required headers",
      ],
    );

    // The real delivery, untouched, is taken: once, however often it comes.
    assert.equal(await replay(hooks, real.body, real.headers), 204);
    assert.equal(await replay(hooks, real.body, real.headers), 204);
    const ofReal = example.lines().filter((l) => l.startsWith(realEvent.id));
    assert.deepEqual(ofReal, [
      `${realEvent.id} webhook.created ${capture.url}/capture by ADMIN_API_KEY`,
      `${realEvent.id} again: already handled`,
    ]);
    await example.stop();
  });
});
