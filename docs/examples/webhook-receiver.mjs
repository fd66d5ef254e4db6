// A receiver of Flagstaff webhooks in Node.js (see docs/history-and-webhooks.md). It checks each POST's
// signature with the `standardwebhooks` package, handles each event once however often it arrives,
// and answers quickly.
//
//   npm install standardwebhooks
//   WEBHOOK_SECRET=whsec_… PORT=3000 node webhook-receiver.mjs
//
// HOST (default 127.0.0.1) and PORT (default 3000; 0 picks a free one) say where it listens. It prints
// one line per event. The tests run this file against a real server, deliveries and forgeries included
// (packages/server/test/webhook-receiver-example.test.ts), so what it shows keeps working.
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { Webhook } from "standardwebhooks";

/** Flagstaff's bodies are small (one event); anything much larger is not from it. */
const MAX_BODY_BYTES = 1024 * 1024;
/** Event ids remembered to spot repeats. A real receiver keeps them in its database instead. */
const REMEMBERED_IDS = 10_000;

/**
 * An HTTP server that takes Flagstaff's deliveries and calls `handle(event)` once per event. A POST
 * whose signature does not verify (wrong secret, altered body, a timestamp more than five minutes off)
 * gets 400. A repeat (same `webhook-id`: Flagstaff delivers at least once) is answered 204 without
 * calling `handle` again. When `handle` throws, the answer is 500 and Flagstaff tries again later.
 */
export function createReceiver(secret, handle) {
  const verifier = new Webhook(secret);
  const handled = new Set();
  return createServer((request, response) => {
    if (request.method !== "POST") {
      response.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const chunks = [];
    let size = 0;
    request.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on("end", async () => {
      // Verify the body exactly as it arrived: JSON parsed and serialized again would not match.
      const body = Buffer.concat(chunks).toString("utf8");
      let event;
      try {
        event = verifier.verify(body, request.headers);
      } catch (error) {
        console.log(`refused: ${error.message}`);
        response.writeHead(400).end();
        return;
      }
      // webhook-id is the event's id, the same on every attempt: the key to handle it once.
      const id = request.headers["webhook-id"];
      if (handled.has(id)) {
        console.log(`${id} again: already handled`);
        response.writeHead(204).end();
        return;
      }
      try {
        await handle(event);
      } catch (error) {
        console.log(`${id} failed: ${error.message}`);
        response.writeHead(500).end();
        return;
      }
      handled.add(id);
      if (handled.size > REMEMBERED_IDS) handled.delete(handled.values().next().value);
      response.writeHead(204).end();
    });
  });
}

/**
 * What to do with an event: here, print it. Deliveries are not ordered; event ids (ULIDs) sort by time.
 * To mirror state, apply an event's `after` only if its id is greater than the last one applied to the
 * same target (`event.target.id`), or read the current state from the API.
 */
function printEvent(event) {
  const who = event.actor.keyName ?? event.actor.system;
  console.log(`${event.id} ${event.type} ${event.target.name} by ${who}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    console.error("Set WEBHOOK_SECRET to the secret (whsec_…) that creating the webhook answered.");
    process.exit(2);
  }
  const host = process.env.HOST || "127.0.0.1";
  const server = createReceiver(secret, printEvent);
  server.listen(Number(process.env.PORT ?? 3000), host, () => {
    console.log(`listening on http://${host}:${server.address().port}`);
  });
  process.on("SIGTERM", () => server.close());
}
