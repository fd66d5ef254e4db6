// Rate limits (issue 34): OFREP bulk evaluations made with a check key (the key in every web page) are
// limited by default, per key and client address; TRUST_PROXY says whose X-Forwarded-For names the client.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { ConfigError, loadConfig } from "../src/kernel/config.js";

const base = { DATABASE_URL: "file::memory:" };

describe("rate-limit settings", () => {
  test("the bulk limit for check keys is on by default, 300 a minute; 0 turns it off", () => {
    assert.equal(loadConfig(base).ofrepBulkRateLimitPerMinute, 300);
    assert.equal(loadConfig({ ...base, OFREP_BULK_RATE_LIMIT_PER_MINUTE: "0" }).ofrepBulkRateLimitPerMinute, 0);
    assert.throws(() => loadConfig({ ...base, OFREP_BULK_RATE_LIMIT_PER_MINUTE: "-1" }), ConfigError);
    assert.throws(() => loadConfig({ ...base, OFREP_BULK_RATE_LIMIT_PER_MINUTE: "lots" }), ConfigError);
  });

  test("TRUST_PROXY: off by default; true, hops, or addresses and ranges; anything else refused at start", () => {
    assert.equal(loadConfig(base).trustProxy, false);
    assert.equal(loadConfig({ ...base, TRUST_PROXY: "false" }).trustProxy, false);
    assert.equal(loadConfig({ ...base, TRUST_PROXY: "true" }).trustProxy, true);
    assert.equal(loadConfig({ ...base, TRUST_PROXY: "2" }).trustProxy, 2);
    assert.equal(
      loadConfig({ ...base, TRUST_PROXY: "10.0.0.0/8, 192.168.1.7,loopback,fd00::/8" }).trustProxy,
      "10.0.0.0/8,192.168.1.7,loopback,fd00::/8",
    );
    for (const bad of ["yes please", "10.0.0.0/33", "10.0.0.1/8/2", "example.com", "fd00::/129", "101"]) {
      assert.throws(() => loadConfig({ ...base, TRUST_PROXY: bad }), /^ConfigError: TRUST_PROXY/, bad);
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`the OFREP bulk limit of check keys [${dialect}]`, () => {
    let server: TestServer;
    let trusting: TestServer;
    let project: string;
    let checkKey: string;
    const LIMIT = 3;
    const bulk = (on: TestServer, key: string, headers: Record<string, string> = {}) =>
      on.request("POST", "/ofrep/v1/evaluate/flags", { key, body: { context: { targetingKey: "alice" } }, headers });
    /** Bulk evaluations until refused; answers how many were answered (at most `upTo`). */
    async function answeredUntilRefused(on: TestServer, key: string, headers: Record<string, string> = {}, upTo = 10) {
      for (let i = 0; i < upTo; i++) {
        const res = await bulk(on, key, headers);
        if (res.status === 429) {
          expectProblem(res, 429, "rate_limited");
          assert.match(res.headers.get("retry-after") ?? "", /^\d+$/);
          assert.match(res.body.detail, /^Over 3 requests per minute; retry in /);
          return i;
        }
        assert.equal(res.status, 200, res.text);
      }
      return upTo;
    }

    before(async () => {
      const env = { OFREP_BULK_RATE_LIMIT_PER_MINUTE: String(LIMIT) };
      server = await startServer({ dialect, env });
      project = await createProject(server);
      checkKey = (await createKey(server, project, "check")).key;
      await server.request("POST", `/projects/${project}/flags/banner`, {});
      // A second server on its own database, behind a "proxy" on loopback.
      trusting = await startServer({ dialect, env: { ...env, TRUST_PROXY: "loopback" } });
    });
    after(async () => {
      await server.close();
      await trusting.close();
    });

    test("a check key's bulk evaluations from one address stop at the limit, with 429 and Retry-After", async () => {
      assert.equal(await answeredUntilRefused(server, checkKey), LIMIT);
      // The answer says how much is left, as every rate-limited answer does.
      const other = (await createKey(server, project, "check")).key;
      const first = await bulk(server, other);
      assert.equal(first.headers.get("x-ratelimit-limit"), String(LIMIT));
      assert.equal(first.headers.get("x-ratelimit-remaining"), String(LIMIT - 1));
    });

    test("the limit is the key's and the address's: another check key has its own budget", async () => {
      const another = (await createKey(server, project, "check")).key;
      assert.equal(await answeredUntilRefused(server, another), LIMIT);
    });

    test("single evaluations, checks, and bulk evaluations with read or write keys are not limited", async () => {
      const limited = (await createKey(server, project, "check")).key;
      assert.equal(await answeredUntilRefused(server, limited), LIMIT);
      for (let i = 0; i < LIMIT * 3; i++) {
        const single = await server.request("POST", "/ofrep/v1/evaluate/flags/banner", {
          key: limited,
          body: { context: { targetingKey: `u${i}` } },
        });
        assert.equal(single.status, 200, single.text);
        const check = await server.request("GET", `/projects/${project}/flags/banner/check?actorIds=u${i}`, {
          key: limited,
        });
        assert.equal(check.status, 200, check.text);
      }
      for (const role of ["read", "write"] as const) {
        const key = (await createKey(server, project, role)).key;
        assert.equal(await answeredUntilRefused(server, key, {}, LIMIT * 3), LIMIT * 3, role);
      }
    });

    test("without TRUST_PROXY, X-Forwarded-For buys no fresh budget", async () => {
      const key = (await createKey(server, project, "check")).key;
      let answered = 0;
      for (let i = 0; i < LIMIT + 2; i++) {
        const res = await bulk(server, key, { "x-forwarded-for": `203.0.113.${i}` });
        if (res.status === 200) answered++;
        else expectProblem(res, 429, "rate_limited");
      }
      assert.equal(answered, LIMIT);
    });

    test("with TRUST_PROXY, each client address the proxy names has its own budget", async () => {
      const p = await createProject(trusting);
      const key = (await createKey(trusting, p, "check")).key;
      const from = (address: string) => ({ "x-forwarded-for": address });
      assert.equal(await answeredUntilRefused(trusting, key, from("203.0.113.10")), LIMIT);
      assert.equal(await answeredUntilRefused(trusting, key, from("203.0.113.11")), LIMIT);
      // The first client is still refused; the proxy's own address (no header) has a budget of its own.
      expectProblem(await bulk(trusting, key, from("203.0.113.10")), 429, "rate_limited");
      assert.equal((await bulk(trusting, key)).status, 200);
    });
  });
}

describe("the OFREP bulk limit turned off, and the limit of every request", () => {
  test("OFREP_BULK_RATE_LIMIT_PER_MINUTE=0: a check key's bulk evaluations are not limited", async () => {
    const server = await startServer({ dialect: "sqlite", env: { OFREP_BULK_RATE_LIMIT_PER_MINUTE: "0" } });
    try {
      const key = (await createKey(server, await createProject(server), "check")).key;
      for (let i = 0; i < 10; i++) {
        const res = await server.request("POST", "/ofrep/v1/evaluate/flags", { key, body: {} });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers.get("x-ratelimit-limit"), null);
      }
    } finally {
      await server.close();
    }
  });

  test("RATE_LIMIT_PER_MINUTE limits a read key's bulk evaluations; a check key's keep their own limit", async () => {
    const env = { RATE_LIMIT_PER_MINUTE: "4", OFREP_BULK_RATE_LIMIT_PER_MINUTE: "2" };
    const server = await startServer({ dialect: "sqlite", env });
    try {
      const project = await createProject(server);
      const statuses = async (key: string, n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) {
          out.push((await server.request("POST", "/ofrep/v1/evaluate/flags", { key, body: {} })).status);
        }
        return out;
      };
      assert.deepEqual(await statuses((await createKey(server, project, "read")).key, 5), [200, 200, 200, 200, 429]);
      assert.deepEqual(await statuses((await createKey(server, project, "check")).key, 3), [200, 200, 429]);
    } finally {
      await server.close();
    }
  });
});
