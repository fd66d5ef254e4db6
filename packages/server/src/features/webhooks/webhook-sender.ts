import http from "node:http";
import https from "node:https";
import { Webhook as Signer } from "standardwebhooks";
import { checkLiteralAddress, safeLookup } from "./safe-target.js";

export interface Attempt {
  /** The answer's status; undefined when none came (refused, timed out, unsafe target). */
  readonly statusCode?: number;
  /** Why the attempt failed; undefined on a 2xx answer. */
  readonly error?: string;
  readonly durationMs: number;
}

export interface SendOptions {
  readonly timeoutMs: number;
  readonly allowPrivateNetworks: boolean;
  /** Aborts the attempt (at shutdown). */
  readonly signal?: AbortSignal;
  /** Keep-alive agents to reuse connections through; a fresh connection per attempt without them. */
  readonly agents?: { readonly http: http.Agent; readonly https: https.Agent };
}

/**
 * Keep-alive agents for a dispatcher. Reusing a connection is safe with the address checks: each was
 * checked when it was opened (safeLookup runs at connect), and it stays with the address it was opened to.
 */
export function keepAliveAgents(maxSockets: number) {
  return {
    http: new http.Agent({ keepAlive: true, maxSockets }),
    https: new https.Agent({ keepAlive: true, maxSockets }),
  };
}

const USER_AGENT = "Flagstaff-Webhooks/1.0";
/** A receiver's answer body is read (to free the socket) but never kept beyond this many bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs one signed delivery the Standard Webhooks way: `webhook-id` (the event id, the same on every
 * retry), `webhook-timestamp` (seconds) and `webhook-signature` (`v1,` HMAC-SHA256 by the
 * `standardwebhooks` package). Redirects are not followed; a 2xx answer within the timeout is a success.
 */
export async function sendDelivery(
  target: string,
  secret: string,
  messageId: string,
  body: string,
  options: SendOptions,
): Promise<Attempt> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const url = new URL(target);
    if (!options.allowPrivateNetworks) checkLiteralAddress(url);
    const now = new Date();
    const headers = {
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      "webhook-id": messageId,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Signer(secret).sign(messageId, now, body),
    };
    const statusCode = await post(url, headers, body, options);
    if (statusCode >= 200 && statusCode < 300) return { statusCode, durationMs: elapsed() };
    const error =
      statusCode >= 300 && statusCode < 400 ? `HTTP ${statusCode}: redirects are not followed` : `HTTP ${statusCode}`;
    return { statusCode, error, durationMs: elapsed() };
  } catch (error) {
    return { error: describe(error, options), durationMs: elapsed() };
  }
}

/** The attempt ran out of time (the sender's own timer fired). */
class AttemptTimeout extends Error {
  override readonly name = "TimeoutError";
}

/** The attempt was cut short by shutdown. */
class AttemptAborted extends Error {
  override readonly name = "AbortError";
}

function describe(error: unknown, options: SendOptions): string {
  if (error instanceof AttemptTimeout) return `no answer within ${options.timeoutMs} ms`;
  if (error instanceof AttemptAborted) return "aborted at shutdown";
  const e = error as NodeJS.ErrnoException;
  const message = e.message ?? String(error);
  return e.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}

/**
 * One POST, ended by a timer of its own after `timeoutMs` (DNS, connect, upload and answer included) or by
 * the shutdown signal. The timer is a plain setTimeout held by this call until the request ends, and
 * cleared then: not AbortSignal.timeout combined by AbortSignal.any, whose timeout signal nothing kept
 * alive on Node.js 20, so a garbage collection could take its timer away and leave a request to a receiver
 * that never answers open for ever, holding its slot.
 */
function post(url: URL, headers: Record<string, string>, body: string, options: SendOptions): Promise<number> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(new AttemptAborted("aborted at shutdown"));
  const secure = url.protocol === "https:";
  const client = secure ? https : http;
  const agent = options.agents ? (secure ? options.agents.https : options.agents.http) : false;
  return new Promise<number>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        agent,
        ...(options.allowPrivateNetworks ? {} : { lookup: safeLookup }),
      },
      (response) => {
        let read = 0;
        response.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        response.on("close", () => resolve(response.statusCode ?? 0));
        response.on("error", () => resolve(response.statusCode ?? 0));
      },
    );
    const timer = setTimeout(
      () => request.destroy(new AttemptTimeout(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const onShutdown = () => request.destroy(new AttemptAborted("aborted at shutdown"));
    signal?.addEventListener("abort", onShutdown, { once: true });
    // "close" comes last, however the request ended (answered, failed, destroyed): the timer and the
    // listener go then, so a finished attempt leaves nothing behind.
    request.on("close", () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onShutdown);
    });
    request.on("error", reject);
    request.end(body);
  });
}
