import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  freshDatabase,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";

/** The value of one sample line (`name{labels} value`) in a Prometheus exposition, or undefined. */
function sample(text: string, name: string, labels = ""): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}${labels} `) || (labels === "" && line.startsWith(`${name} `))) {
      return Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return undefined;
}

for (const dialect of DIALECTS) {
  describe(`metrics [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      await server.request("POST", `/projects/${project}/flags/on`, {});
      await server.request("PATCH", `/projects/${project}/flags/on`, { body: { status: "enabled" } });
      await server.request("POST", `/projects/${project}/flags/off`, {});
    });
    after(() => server.close());

    test("needs an admin key: 401 without, 403 with a project key, 200 with admin", async () => {
      expectProblem(await server.request("GET", "/metrics", { key: null }), 401, "unauthorized");
      const read = await createKey(server, project, "read");
      expectProblem(await server.request("GET", "/metrics", { key: read.key }), 403, "forbidden");
      const res = await server.request("GET", "/metrics");
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    });

    test("counts checks by result and requests by route and status", async () => {
      const before = (await server.request("GET", "/metrics")).text;
      const enabledBefore = sample(before, "flagstaff_checks_total", '{result="enabled"}') ?? 0;
      const disabledBefore = sample(before, "flagstaff_checks_total", '{result="disabled"}') ?? 0;
      for (let i = 0; i < 3; i++) await server.request("GET", `/projects/${project}/flags/on/check`);
      await server.request("GET", `/projects/${project}/flags/off/check`);
      await server.request("GET", `/projects/${project}/flags/missing/check`);
      const text = (await server.request("GET", "/metrics")).text;
      assert.equal(sample(text, "flagstaff_checks_total", '{result="enabled"}'), enabledBefore + 3);
      assert.equal(sample(text, "flagstaff_checks_total", '{result="disabled"}'), disabledBefore + 1);
      const route = "/projects/:projectId/flags/:flagName/check";
      const ok = sample(
        text,
        "flagstaff_http_request_duration_seconds_count",
        `{method="GET",route="${route}",status="200"}`,
      );
      const missing = sample(
        text,
        "flagstaff_http_request_duration_seconds_count",
        `{method="GET",route="${route}",status="404"}`,
      );
      assert.ok(ok !== undefined && ok >= 4, `check 200s counted: ${ok}`);
      assert.equal(missing, 1);
      assert.match(
        text,
        /flagstaff_http_request_duration_seconds_bucket\{le="0.0005",method="GET",route="\/projects\/:projectId\/flags\/:flagName\/check",status="200"\}/,
      );
    });

    test("reports the snapshot's size and the process's memory", async () => {
      const text = (await server.request("GET", "/metrics")).text;
      assert.equal(sample(text, "flagstaff_snapshot_size", '{kind="projects"}'), 1);
      assert.equal(sample(text, "flagstaff_snapshot_size", '{kind="flags"}'), 2);
      assert.ok((sample(text, "flagstaff_process_resident_memory_bytes") ?? 0) > 10_000_000);
    });
  });

  describe(`metrics open with METRICS_PUBLIC [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { METRICS_PUBLIC: "true" } });
    });
    after(() => server.close());

    test("answers without a key", async () => {
      const res = await server.request("GET", "/metrics", { key: null });
      assert.equal(res.status, 200);
      assert.match(res.text, /flagstaff_snapshot_size/);
    });
  });
}

describe("change-feed lag", { skip: DIALECTS.includes("postgres") ? false : "PostgreSQL not available" }, () => {
  test("an instance records the lag of changes it hears from another", async () => {
    const database = await freshDatabase("postgres");
    const a = await startServer({ dialect: "postgres", database });
    const b = await startServer({ dialect: "postgres", database });
    const lagCount = async (server: TestServer) =>
      sample((await server.request("GET", "/metrics")).text, "flagstaff_change_feed_lag_seconds_count") ?? 0;
    try {
      // Each instance's start-up (its admin-key check) is a change the other may hear: take the baselines
      // once each has every change the other made, which is when their snapshots are at the same versions.
      await waitFor(
        "both instances to hold each other's changes",
        () => isDeepStrictEqual(a.service.feed.snapshot.versions, b.service.feed.snapshot.versions),
        { timeoutMs: 10_000 },
      );
      const aBefore = await lagCount(a);
      const bBefore = await lagCount(b);
      await a.request("POST", "/projects", { body: { id: "lag", name: "lag" } });
      await a.request("POST", "/projects/lag/flags/f", {});
      await a.request("PATCH", "/projects/lag/flags/f", { body: { status: "enabled" } });
      const heard = await waitFor(
        "B to record the lag of A's three change sets",
        async () => (await lagCount(b)) - bBefore,
        {
          until: (count) => count >= 3,
          timeoutMs: 10_000,
        },
      );
      assert.equal(heard, 3, "B records the lag of each of A's three change sets");
      assert.equal(await lagCount(a), aBefore, "an instance does not count its own changes as lag");
    } finally {
      await a.stop();
      await b.stop();
      await database.drop();
    }
  });
});
