import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";
import { Type } from "typebox";

/** A version as `Last-Event-ID` and the OFREP routes spell it: digits, at most 15 (a safe integer). */
export const VERSION = /^\d{1,15}$/;

/** The request header of an event stream's route: where a client resumes. */
export const LastEventIdHeaders = Type.Object({
  "last-event-id": Type.Optional(
    Type.String({ maxLength: 64, description: "The id of the last event received, to resume after it" }),
  ),
});

/** The 200 answer of an event stream's route, as the OpenAPI document describes it. */
export const EventStreamAnswer = {
  description: "An event stream",
  content: { "text/event-stream": { schema: Type.String() } },
};

/** The version a client resumes from (`Last-Event-ID`), or undefined when it sent none or no version. */
export function lastEventId(header: string | undefined): number | undefined {
  return header !== undefined && VERSION.test(header) ? Number(header) : undefined;
}

/**
 * Takes the response from Fastify and starts it as an event stream: the headers Fastify's hooks set
 * (CORS, the request id, the security headers) and the stream's own, sent at once. `Connection: close`:
 * the connection ends with the stream (which closes it when it ends: a revoked key, a stalled client, a
 * shutdown), so no client puts it back in its pool and sends its next request into a closing socket.
 */
export function openEventStream(reply: FastifyReply, gzip = false): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    "content-type": "text/event-stream; charset=utf-8",
    // Each event a gzip member of its own, for a client that asked (gzip-members.ts).
    ...(gzip ? { "content-encoding": "gzip" } : {}),
    "cache-control": "no-store",
    connection: "close",
    // Proxies (nginx) must pass events on at once rather than buffer them.
    "x-accel-buffering": "no",
  });
  raw.flushHeaders();
  return raw;
}
