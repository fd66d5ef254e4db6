import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import type { preParsingHookHandler } from "fastify";

/** A body the OFREP fast path read but left to Fastify, which reads it from here. */
const BUFFERED_BODY = Symbol("flagstaff.bufferedBody");

type BufferedRequest = IncomingMessage & { [BUFFERED_BODY]?: Buffer };

/** Keeps a body already read off the request, for replayBufferedBody to give to Fastify. */
export function leaveBody(request: IncomingMessage, body: Buffer): void {
  (request as BufferedRequest)[BUFFERED_BODY] = body;
}

/**
 * The OFREP evaluation route's preParsing hook: a body the fast path already read is given back to
 * Fastify as the payload, so the request is parsed, validated and answered as any other.
 */
export const replayBufferedBody: preParsingHookHandler = (request, _reply, payload, done) => {
  const body = (request.raw as BufferedRequest)[BUFFERED_BODY];
  done(null, body === undefined ? payload : (Readable.from([body]) as unknown as typeof payload));
};
