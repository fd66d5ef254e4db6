import type { Socket } from "node:net";
import { AppError } from "../kernel/errors.js";
import { problemBody } from "./problem.js";

/**
 * Answers requests that Node's HTTP parser refuses before Fastify sees them (request line and headers
 * over 16 KiB, broken HTTP, a request that trickled in past the request or header timeout), as problem
 * details written straight to the socket, then closes the connection.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  // A request answered before it had fully arrived (a 401 sent before the body came in) has had its
  // one response: a second would be read as the answer to the client's next request.
  const answered = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === "ECONNRESET" || !socket.writable || answered) {
    socket.destroy();
    return;
  }
  const problem =
    error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new AppError(408, "request_timeout", "The request did not arrive in time; send it again, whole.")
      : new AppError(
          400,
          "invalid_request",
          error.code === "HPE_HEADER_OVERFLOW"
            ? "The request line and headers are larger than 16 KiB."
            : "The request is not valid HTTP/1.1.",
        );
  const body = problemBody(problem);
  // A HEAD answer never has a body (the client would read it as the start of the next response); the
  // method is known only from the bytes the parser saw.
  const raw = error.rawPacket;
  const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString("latin1") === "HEAD ";
  const reason = problem.status === 408 ? "Request Timeout" : "Bad Request";
  socket.end(
    `HTTP/1.1 ${problem.status} ${reason}\r\nContent-Type: application/problem+json\r\n` +
      `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? "" : body}`,
  );
}
