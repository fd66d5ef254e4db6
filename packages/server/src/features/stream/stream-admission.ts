import type { FastifyReply } from "fastify";
import { AppError, busy } from "../../kernel/errors.js";
import type { ProjectStreams, StreamKind } from "./project-streams.js";

/** How long a refused client should wait before it tries again, in seconds: streams last, slots free slowly. */
export const STREAM_RETRY_AFTER_SECONDS = 10;

/**
 * Throws the refusal for a stream over the limits, with `Retry-After`: `429 rate_limited` when its key
 * holds as many streams as allowed, `503 busy` when this instance does. The codes are those clients know.
 */
export function admitStream(streams: ProjectStreams, kind: StreamKind, keyId: string, reply: FastifyReply): void {
  const refusal = streams.refusal(kind, keyId);
  if (!refusal) return;
  reply.header("retry-after", STREAM_RETRY_AFTER_SECONDS);
  const what = kind === "state" ? "project streams" : "OFREP event streams";
  if (refusal.scope === "key") {
    throw new AppError(
      429,
      "rate_limited",
      `This key already holds ${refusal.limit} open ${what} on this instance, the most allowed; close one, or retry in ${STREAM_RETRY_AFTER_SECONDS} s.`,
    );
  }
  throw busy(
    `This instance already holds ${refusal.limit} open streams, the most it allows; retry in ${STREAM_RETRY_AFTER_SECONDS} s, or on another instance.`,
  );
}
