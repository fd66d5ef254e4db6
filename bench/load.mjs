// Load generator, run as its own process so it does not share an event loop with what it measures.
// Input (argv[2], JSON): { url, connections, duration, method, headers, paths: [..], bodies?: [..] }.
// Output (stdout, JSON): { rps, p50, p99, errors, non2xx, requests }.
import autocannon from "autocannon";

const spec = JSON.parse(process.argv[2]);
let i = 0;
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.duration,
  method: spec.method ?? "GET",
  headers: spec.headers ?? {},
  requests: [
    {
      setupRequest(request) {
        const n = i++;
        request.path = spec.paths[n % spec.paths.length];
        if (spec.bodies) request.body = spec.bodies[n % spec.bodies.length];
        return request;
      },
    },
  ],
});
process.stdout.write(
  JSON.stringify({
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    requests: result.requests.total,
  }),
);
