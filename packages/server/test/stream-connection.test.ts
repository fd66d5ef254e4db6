// A stream's connection is never reused after the stream ends (issue 32, finding 8). When revoking a key
// ends its streams on another instance, the server ends the response and closes the connection; a client
// that put the keep-alive connection back in its pool sent its next request into a closing socket and got a
// socket error (undici's UND_ERR_SOCKET) instead of the 401. A stream response says `Connection: close`,
// so no client reuses it. The project stream and the OFREP event stream, on two instances over one
// database, each many times, through fetch (undici) with one connection per origin.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  type FreshDatabase,
  freshDatabase,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";

const ROUNDS = 20;

/** What fetch takes as `dispatcher`: an undici Agent. */
interface Dispatcher {
  close(): Promise<void>;
}

/**
 * An undici Agent of Node's own fetch that keeps one connection per origin, so the request after a stream
 * goes on the stream's connection whenever the agent thinks it reusable. Node bundles undici without
 * exporting it: its Agent is the class of the global dispatcher (set up by the first fetch).
 */
async function oneConnectionAgent(url: string): Promise<Dispatcher> {
  await (await fetch(`${url}/healthz`)).arrayBuffer();
  const global = (globalThis as Record<symbol, unknown>)[Symbol.for("undici.globalDispatcher.1")];
  const Agent = (global as { constructor: new (options: object) => Dispatcher }).constructor;
  return new Agent({ connections: 1 });
}

for (const dialect of DIALECTS) {
  describe(`a stream's connection after the stream ends [${dialect}]`, () => {
    let database: FreshDatabase;
    let a: TestServer;
    let b: TestServer;
    let project: string;

    before(async () => {
      database = await freshDatabase(dialect);
      const env = { FEED_POLL_INTERVAL_MS: "50" };
      a = await startServer({ dialect, database, env });
      b = await startServer({ dialect, database, env });
      project = await createProject(a);
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await database?.drop();
    });

    for (const [label, path, role] of [
      ["the project stream", () => `/projects/${project}/stream`, "read"],
      ["the OFREP event stream", () => "/ofrep/v1/event-stream", "check"],
    ] as const) {
      test(`${label}: revoked on A, it ends on B, and the next request on that connection pool is a clean 401`, async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const created = await a.request("POST", `/projects/${project}/keys`, {
            body: { role, name: `round ${round}` },
          });
          assert.equal(created.status, 201, created.text);
          const key = created.body.key as string;
          const authorization = { authorization: `Bearer ${key}` };
          await waitFor(
            "B to know the key made on A",
            async () => (await b.request("GET", "/whoami", { key })).status,
            {
              until: (status) => status === 200,
            },
          );
          const dispatcher = await oneConnectionAgent(b.url);
          try {
            const stream = await fetch(`${b.url}${path()}`, { headers: authorization, dispatcher } as RequestInit);
            assert.equal(stream.status, 200);
            assert.equal(stream.headers.get("connection"), "close", "the stream says its connection ends with it");
            const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
            await reader.read();
            const revoked = await a.request("DELETE", `/projects/${project}/keys/${created.body.id}`);
            assert.equal(revoked.status, 204, revoked.text);
            // B learns of the revocation and ends the stream.
            while (!(await reader.read()).done) {}
            // At once, through the same pool, as a client's next call goes.
            const next = await fetch(`${b.url}/whoami`, { headers: authorization, dispatcher } as RequestInit).catch(
              (error: Error) => {
                const code = (error.cause as { code?: string } | undefined)?.code;
                throw new Error(`round ${round}: the request after the stream failed: ${error.message} (${code})`);
              },
            );
            const body = await next.text();
            assert.equal(next.status, 401, `round ${round}: ${body}`);
          } finally {
            await dispatcher.close();
          }
        }
      });
    }
  });
}
