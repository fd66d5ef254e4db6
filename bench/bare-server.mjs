// The baselines: a bare node:http server answering what a check answers, with its Content-Type,
// Content-Length and Cache-Control (not X-Request-Id and X-Content-Type-Options, the check's own); and,
// for a POST, what an OFREP evaluation answers, after reading and parsing its JSON body as OFREP must
// (a POST with a body costs node:http more than a GET, so OFREP is compared with this, too).
import { createServer } from "node:http";

const body = JSON.stringify({ enabled: true });
const evaluation = JSON.stringify({
  key: "checkout",
  value: true,
  reason: "TARGETING_MATCH",
  variant: "on",
  metadata: {},
});
const headers = (answer) => ({
  "content-type": "application/json; charset=utf-8",
  "content-length": Buffer.byteLength(answer),
  "cache-control": "no-store",
});
const server = createServer((request, response) => {
  if (request.method !== "POST") {
    response.writeHead(200, headers(body));
    response.end(body);
    return;
  }
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    JSON.parse(Buffer.concat(chunks).toString("utf8"));
    response.writeHead(200, headers(evaluation));
    response.end(evaluation);
  });
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => process.send?.("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
