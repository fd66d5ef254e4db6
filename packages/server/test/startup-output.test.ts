// What `npm start` shows a newcomer, as a real server process on a fresh database at the default log level:
// the generated admin key again, in a box, as the last thing start-up prints; then one line per write (or
// refused request) and nothing for reads, so that the console's polling cannot scroll the key away; the
// console's "am I signed in?" (GET /whoami without a key, 401) is a read too.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, freshDatabase, launchServer, type ServerProcess } from "@flagstaff/test-harness";

const KEY = /fsk_[A-Za-z0-9_-]{43}/g;
/** The box: rules of ─ in corners, the key on a line of its own. */
const BOX = /┌─+┐\n(?:│.*│\n)*│ +(fsk_[A-Za-z0-9_-]{43}) +│\n(?:│.*│\n)*└─+┘\n+/;

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  method?: string;
  url?: string;
  statusCode?: number;
  responseTime?: number;
  keyId?: string;
}

/** The JSON log lines of a stretch of output (the box and the plain key lines are not JSON). */
function logLines(text: string): LogLine[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);
}

for (const dialect of DIALECTS) {
  describe(`start-up output and request logging at the default level [${dialect}]`, () => {
    let server: ServerProcess;
    let startup: string;
    let key: string;

    before(
      async () => {
        const database = await freshDatabase(dialect);
        // LOG_LEVEL unset: the default (info), as `npm start` runs.
        server = await launchServer({ env: { DATABASE_URL: database.url, LOG_LEVEL: undefined } });
        await server.waitForOutput(BOX);
        startup = server.stdout;
        key = (BOX.exec(startup) as RegExpExecArray)[1] as string;
      },
      { timeout: 60_000 },
    );
    after(async () => {
      await server?.stop("SIGTERM");
    });

    test("the generated admin key is printed again, in a box, after the serving line and last", () => {
      assert.deepEqual(new Set(startup.match(KEY)), new Set([key]), "one generated key");
      const box = startup.search(/┌─+┐/);
      const serving = startup.indexOf('"msg":"flagstaff is serving"');
      assert.ok(serving !== -1 && serving < box, `the box comes after the serving line:\n${startup}`);
      // Nothing of start-up after it, though /healthz was polled until the server answered (waitReady's
      // GETs). A warning a loaded machine may log later (a slow database connection) is not start-up's.
      const after = logLines(startup.slice(box)).filter((line) => line.level < 40);
      assert.deepEqual(after, [], `the box ends the start-up output:\n${startup}`);
      assert.match(startup.slice(box), new RegExp(`Bearer <key>" against ${server.url},`));
      assert.ok(startup.includes(`${server.url}/console/`), "where to sign in");
    });

    test("reads are not logged; each write and each refused request is one line with its request id", async () => {
      const before = server.stdout.length;
      for (let i = 0; i < 5; i++) {
        assert.equal((await server.request("GET", "/projects", { key })).status, 200);
        assert.equal((await server.request("GET", "/healthz", { key: null })).status, 200);
        // The console asking whether it is signed in, at every load of its sign-in page: a read.
        assert.equal((await server.request("GET", "/whoami", { key: null })).status, 401);
        const ended = { key: null, headers: { cookie: "flagstaff_session=ended" } };
        assert.equal((await server.request("GET", "/whoami", ended)).status, 401);
      }
      // A wrong key is a refused request, logged.
      const wrongKey = await server.request("GET", "/whoami", { key: "fsk_not-a-key" });
      assert.equal(wrongKey.status, 401);
      const created = await server.request("POST", "/projects", { key, body: { id: "shop", name: "Shop" } });
      assert.equal(created.status, 201, created.text);
      const refused = await server.request("GET", "/projects/none", { key });
      assert.equal(refused.status, 404, refused.text);
      const flag = await server.request("POST", "/projects/shop/flags/banner", { key, body: {} });
      assert.equal(flag.status, 201, flag.text);
      assert.equal((await server.request("GET", "/projects/shop/flags/banner", { key })).status, 200);
      const enabled = await server.request("PATCH", "/projects/shop/flags/banner", {
        key,
        body: { status: "enabled" },
      });
      assert.equal(enabled.status, 200, enabled.text);
      // Lines are written in order: once the last write's line is out, any read's line would be too.
      const last = enabled.headers.get("x-request-id") as string;
      await server.waitForOutput(new RegExp(`"reqId":"${last}"`));

      const lines = logLines(server.stdout.slice(before)).filter((line) => line.level < 40);
      const requests = lines.map(({ method, url, statusCode, reqId, level }) => ({
        method,
        url,
        statusCode,
        reqId,
        level,
      }));
      assert.deepEqual(
        requests,
        [
          { method: "GET", url: "/whoami", statusCode: 401, reqId: wrongKey.headers.get("x-request-id"), level: 30 },
          { method: "POST", url: "/projects", statusCode: 201, reqId: created.headers.get("x-request-id"), level: 30 },
          {
            method: "GET",
            url: "/projects/none",
            statusCode: 404,
            reqId: refused.headers.get("x-request-id"),
            level: 30,
          },
          {
            method: "POST",
            url: "/projects/shop/flags/banner",
            statusCode: 201,
            reqId: flag.headers.get("x-request-id"),
            level: 30,
          },
          { method: "PATCH", url: "/projects/shop/flags/banner", statusCode: 200, reqId: last, level: 30 },
        ],
        `one line per write or refused request, none for reads:\n${server.stdout.slice(before)}`,
      );
      for (const line of lines) {
        assert.equal(line.msg, "request");
        assert.equal(typeof line.responseTime, "number");
        if (line.statusCode === 401) continue;
        assert.match(line.keyId ?? "", /^key_/, "the key that made it, by id");
        assert.doesNotMatch(JSON.stringify(line), KEY, "never the key itself");
      }
    });
  });
}

describe("request logging at LOG_LEVEL=debug", () => {
  let server: ServerProcess;

  before(
    async () => {
      const database = await freshDatabase(DIALECTS[0] ?? "sqlite");
      server = await launchServer({
        env: { DATABASE_URL: database.url, LOG_LEVEL: "debug", ADMIN_API_KEY: "a-long-enough-admin-key" },
      });
    },
    { timeout: 60_000 },
  );
  after(async () => {
    await server?.stop("SIGTERM");
  });

  test("a read is one line at debug, without the stream token a query may carry", async () => {
    const read = await server.request("GET", "/healthz?token=secret-token", { key: null });
    assert.equal(read.status, 200, read.text);
    const id = read.headers.get("x-request-id") as string;
    await server.waitForOutput(new RegExp(`"reqId":"${id}"`));
    const lines = logLines(server.stdout).filter((line) => line.reqId === id);
    assert.equal(lines.length, 1, server.stdout);
    const [line] = lines as [LogLine];
    assert.equal(line.level, 20, "debug");
    assert.equal(line.method, "GET");
    assert.equal(line.url, "/healthz?token=…");
    assert.ok(!server.stdout.includes("secret-token"), "the token is not logged");
    assert.doesNotMatch(server.stdout, /┌─/, "no box: no key was generated");
  });

  test("the console's GET /whoami without a key (401) is a read, at debug", async () => {
    const asked = await server.request("GET", "/whoami", { key: null });
    assert.equal(asked.status, 401, asked.text);
    const id = asked.headers.get("x-request-id") as string;
    await server.waitForOutput(new RegExp(`"reqId":"${id}"`));
    const [line] = logLines(server.stdout).filter((l) => l.reqId === id) as [LogLine];
    assert.equal(line.level, 20, "debug");
    assert.equal(line.statusCode, 401);
  });
});
