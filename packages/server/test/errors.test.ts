// Error behaviour over real HTTP: every error is RFC 9457 problem details (decisions §3), the limits and
// validation rules of decisions §4 and §5, and "a failed request changes nothing".
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type ApiResponse,
  createKey,
  createProject,
  DIALECTS,
  expectProblem,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";

const ALLOWED_PERCENTAGES = [0, 1, 2, 5, 10, 25, 50, 75, 100];
const EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const MiB = 1024 * 1024;

/** The methods named in an Allow header, sorted. */
function allowOf(res: ApiResponse): string[] {
  const header = res.headers.get("allow");
  assert.ok(header !== null, `405 without an Allow header: ${res.text}`);
  return header
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m !== "")
    .sort();
}

/** Asserts a 400 invalid_request whose first field error points at `path`. */
function expectFieldError(res: ApiResponse, path: string): void {
  expectProblem(res, 400, "invalid_request");
  assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0, `no errors array: ${res.text}`);
  for (const e of res.body.errors) {
    assert.equal(typeof e.path, "string", res.text);
    assert.equal(typeof e.message, "string", res.text);
  }
  assert.equal(res.body.errors[0].path, path, res.text);
}

/** A JSON body of exactly `size` bytes: {"description":"xxx…"}. */
function descriptionBodyOfSize(size: number): string {
  const overhead = JSON.stringify({ description: "" }).length;
  const body = JSON.stringify({ description: "x".repeat(size - overhead) });
  assert.equal(Buffer.byteLength(body), size);
  return body;
}

for (const dialect of DIALECTS) {
  describe(`errors [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
    });
    after(() => server.close());

    const flagPath = (name: string) => `/projects/${project}/flags/${name}`;

    async function newFlag(name: string, patch?: Record<string, unknown>): Promise<void> {
      const created = await server.request("POST", flagPath(name), { body: { description: `flag ${name}` } });
      assert.equal(created.status, 201, created.text);
      if (patch) {
        const patched = await server.request("PATCH", flagPath(name), { body: patch });
        assert.equal(patched.status, 200, patched.text);
      }
    }

    async function newSegment(name: string, addActors?: string[]): Promise<string> {
      const created = await server.request("POST", `/projects/${project}/segments`, {
        body: { name, description: `segment ${name}` },
      });
      assert.equal(created.status, 201, created.text);
      if (addActors) {
        const patched = await server.request("PATCH", `/projects/${project}/segments/${created.body.id}`, {
          body: { addActors },
        });
        assert.equal(patched.status, 200, patched.text);
      }
      return created.body.id;
    }

    /** Everything observable about a project's stored data that these tests touch, as admin. */
    async function fingerprint(extra: string[] = []): Promise<string[]> {
      const paths = [
        `/projects/${project}`,
        `/projects/${project}/flags?limit=100`,
        `/projects/${project}/segments?limit=100`,
        ...extra,
      ];
      const answers = await Promise.all(paths.map((p) => server.request("GET", p)));
      // latestCheckedAt moves with checks, not with writes (and reads of it can briefly lag while checks
      // are flushed; fuzz.test.ts covers that), so it is left out here.
      return answers.map(
        (a, i) =>
          `${paths[i]} → ${a.status} ${a.text.replace(/"latestCheckedAt":(null|"[^"]*")/g, '"latestCheckedAt":…')}`,
      );
    }

    async function check(flag: string, actorIds: string[] = []): Promise<boolean> {
      const query = actorIds.map((a) => `actorIds=${encodeURIComponent(a)}`).join("&");
      const res = await server.request("GET", `${flagPath(flag)}/check${query ? `?${query}` : ""}`);
      assert.equal(res.status, 200, res.text);
      return res.body.enabled;
    }

    describe("405 method_not_allowed with Allow listing exactly the methods of the path", () => {
      const cases: { method: string; path: () => string; allow: string[] }[] = [
        {
          method: "PUT",
          path: () => `/projects/${project}/flags/some-flag`,
          allow: ["DELETE", "GET", "HEAD", "PATCH", "POST"],
        },
        { method: "POST", path: () => `/projects/${project}/flags/some-flag/check`, allow: ["GET", "HEAD"] },
        { method: "DELETE", path: () => "/projects", allow: ["GET", "HEAD", "POST"] },
        { method: "POST", path: () => `/projects/${project}/flags`, allow: ["GET", "HEAD"] },
        {
          method: "PUT",
          path: () => `/projects/${project}/segments/seg_x`,
          allow: ["DELETE", "GET", "HEAD", "PATCH"],
        },
      ];
      for (const c of cases) {
        test(`${c.method} on ${c.path().replace(/p-[0-9a-f]+/, "{p}")} → 405, Allow: ${c.allow.join(", ")}`, async () => {
          const res = await server.request(c.method, c.path(), { body: { status: "enabled" } });
          expectProblem(res, 405, "method_not_allowed");
          assert.deepEqual(allowOf(res), c.allow);
        });
      }

      test("every method outside Allow gets 405, every method inside it does not", async () => {
        // An unknown project keeps the probes from creating anything.
        const paths = [
          "/projects/no-such-project/flags/f",
          "/projects/no-such-project/flags/f/check",
          "/projects/no-such-project/segments/s",
          "/projects",
        ];
        for (const path of paths) {
          const allow = allowOf(await server.request("PUT", path));
          for (const method of EVERY_METHOD) {
            const res = await server.request(method, path);
            if (allow.includes(method)) {
              assert.notEqual(res.status, 405, `${method} ${path} is in Allow ${allow} yet answered 405`);
              if (method !== "HEAD") assert.notEqual(res.body?.code, "not_found", `${method} ${path} is unrouted`);
            } else {
              if (method === "HEAD") assert.equal(res.status, 405, `${method} ${path}`);
              else expectProblem(res, 405, "method_not_allowed");
              assert.deepEqual(allowOf(res), allow, `${method} ${path}`);
            }
          }
        }
      });

      test("a 405 write changes nothing", async () => {
        await newFlag("put-me");
        const beforeState = await fingerprint([flagPath("put-me")]);
        const res = await server.request("PUT", flagPath("put-me"), {
          body: { description: "replaced", status: "enabled" },
        });
        expectProblem(res, 405, "method_not_allowed");
        assert.deepEqual(await fingerprint([flagPath("put-me")]), beforeState);
      });
    });

    describe("404 not_found for unknown routes", () => {
      for (const [method, path] of [
        ["GET", "/nope"],
        ["POST", "/nope"],
        ["GET", "/projects/p/unknown"],
        ["DELETE", "/projects/p/unknown"],
        ["GET", "/projects/p/flags/f/unknown"],
        ["GET", "/v2/projects"],
      ] as const) {
        test(`${method} ${path} → 404 not_found`, async () => {
          const res = await server.request(method, path);
          expectProblem(res, 404, "not_found");
          assert.equal(res.headers.get("allow"), null);
        });
      }
    });

    describe("413 payload_too_large for a body over 1 MiB", () => {
      test("PATCH flag with a 1.1 MiB description → 413, flag unchanged", async () => {
        await newFlag("big-patch");
        const beforeState = await fingerprint([flagPath("big-patch")]);
        const res = await server.request("PATCH", flagPath("big-patch"), {
          body: { description: "x".repeat(Math.ceil(1.1 * MiB)), status: "enabled" },
        });
        expectProblem(res, 413, "payload_too_large");
        assert.deepEqual(await fingerprint([flagPath("big-patch")]), beforeState);
      });

      test("a body of 1 MiB + 1 byte → 413; exactly 1 MiB and just under → the normal 400 for the description", async () => {
        await newFlag("edge-patch");
        const beforeState = await fingerprint([flagPath("edge-patch")]);
        const json = { "content-type": "application/json" };
        const over = await server.request("PATCH", flagPath("edge-patch"), {
          rawBody: descriptionBodyOfSize(MiB + 1),
          headers: json,
        });
        expectProblem(over, 413, "payload_too_large");
        for (const size of [MiB, MiB - 1, MiB - 1000]) {
          const res = await server.request("PATCH", flagPath("edge-patch"), {
            rawBody: descriptionBodyOfSize(size),
            headers: json,
          });
          expectFieldError(res, "/description");
        }
        assert.deepEqual(await fingerprint([flagPath("edge-patch")]), beforeState);
      });

      test("POST flag and POST segment over 1 MiB → 413, nothing created", async () => {
        const beforeState = await fingerprint([flagPath("big-create")]);
        const big = "x".repeat(Math.ceil(1.1 * MiB));
        expectProblem(
          await server.request("POST", flagPath("big-create"), { body: { description: big } }),
          413,
          "payload_too_large",
        );
        expectProblem(
          await server.request("POST", `/projects/${project}/segments`, { body: { name: "big", description: big } }),
          413,
          "payload_too_large",
        );
        assert.deepEqual(await fingerprint([flagPath("big-create")]), beforeState);
        expectProblem(await server.request("GET", flagPath("big-create")), 404, "flag_not_found");
      });
    });

    describe("415 unsupported_media_type for a body that is not application/json", () => {
      const bodies: { type: string | null; body: string }[] = [
        { type: "text/plain", body: '{"description":"as text"}' },
        { type: "text/plain; charset=utf-8", body: '{"description":"as text"}' },
        { type: "application/x-www-form-urlencoded", body: "description=as+form" },
        {
          type: "multipart/form-data; boundary=xyz",
          body: '--xyz\r\nContent-Disposition: form-data; name="description"\r\n\r\nmp\r\n--xyz--\r\n',
        },
        { type: null, body: '{"description":"no type"}' },
      ];
      const targets: { method: string; path: () => string }[] = [
        { method: "POST", path: () => flagPath("media-new") },
        { method: "PATCH", path: () => flagPath("media") },
        { method: "POST", path: () => `/projects/${project}/segments` },
        { method: "POST", path: () => "/projects" },
      ];
      for (const b of bodies) {
        test(`${b.type ?? "no Content-Type"} on POST/PATCH → 415, nothing changed`, async () => {
          const res0 = await server.request("GET", flagPath("media"));
          if (res0.status === 404) await newFlag("media");
          const beforeState = await fingerprint([flagPath("media"), flagPath("media-new"), "/projects?limit=100"]);
          for (const t of targets) {
            const res = await server.request(t.method, t.path(), {
              // A Buffer goes out with no Content-Type at all.
              rawBody: b.type === null ? Buffer.from(b.body) : b.body,
              headers: b.type === null ? {} : { "content-type": b.type },
            });
            try {
              expectProblem(res, 415, "unsupported_media_type");
            } catch (error) {
              throw new Error(`${t.method} ${t.path()}: ${(error as Error).message}`);
            }
          }
          assert.deepEqual(
            await fingerprint([flagPath("media"), flagPath("media-new"), "/projects?limit=100"]),
            beforeState,
          );
        });
      }

      test("application/json with a charset parameter is accepted", async () => {
        await newFlag("charset");
        const res = await server.request("PATCH", flagPath("charset"), {
          rawBody: '{"description":"with charset"}',
          headers: { "content-type": "application/json; charset=utf-8" },
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.description, "with charset");
      });
    });

    describe("400 invalid_request for bodies of the wrong shape", () => {
      let beforeState: string[];
      before(async () => {
        await newFlag("shape", { status: "conditional", percentageActors: 10 });
      });

      const rawPatch = (rawBody: string) =>
        server.request("PATCH", flagPath("shape"), { rawBody, headers: { "content-type": "application/json" } });

      test("malformed JSON → 400 invalid_request, nothing changed", async () => {
        beforeState = await fingerprint([flagPath("shape")]);
        for (const text of [
          '{"description": ',
          '{description: "x"}',
          '{"description": "x",}',
          "{'description': 'x'}",
          '{"description": "x"}}',
          '{"status": enabled}',
          "nul",
          "\u0000",
        ]) {
          const res = await rawPatch(text);
          try {
            expectProblem(res, 400, "invalid_request");
          } catch (error) {
            throw new Error(`${JSON.stringify(text)}: ${(error as Error).message}`);
          }
        }
        assert.deepEqual(await fingerprint([flagPath("shape")]), beforeState);
      });

      test("JSON that is not an object (array, string, number, boolean, null) → 400", async () => {
        beforeState = await fingerprint([flagPath("shape")]);
        for (const text of ["[]", '[{"description":"x"}]', '"description"', "42", "-1.5", "true", "null"]) {
          const res = await rawPatch(text);
          try {
            expectProblem(res, 400, "invalid_request");
          } catch (error) {
            throw new Error(`${text}: ${(error as Error).message}`);
          }
        }
        for (const text of ["[]", '"x"', "7"]) {
          const res = await server.request("POST", flagPath("not-an-object"), {
            rawBody: text,
            headers: { "content-type": "application/json" },
          });
          expectProblem(res, 400, "invalid_request");
        }
        assert.deepEqual(await fingerprint([flagPath("shape")]), beforeState);
        expectProblem(await server.request("GET", flagPath("not-an-object")), 404, "flag_not_found");
      });

      test("an unknown body field (percentActors) → 400 with errors[0].path /percentActors", async () => {
        beforeState = await fingerprint([flagPath("shape")]);
        expectFieldError(
          await server.request("PATCH", flagPath("shape"), { body: { percentActors: 50 } }),
          "/percentActors",
        );
        expectFieldError(
          await server.request("PATCH", flagPath("shape"), { body: { description: "typo next", percentActors: 50 } }),
          "/percentActors",
        );
        expectFieldError(
          await server.request("POST", flagPath("typo-create"), { body: { descripton: "x" } }),
          "/descripton",
        );
        expectFieldError(
          await server.request("POST", `/projects/${project}/segments`, { body: { name: "typo", nmae: "x" } }),
          "/nmae",
        );
        assert.deepEqual(await fingerprint([flagPath("shape")]), beforeState);
      });

      const wrongTypes: [string, Record<string, unknown>, string][] = [
        ['"percentageActors": "50"', { percentageActors: "50" }, "/percentageActors"],
        ['"percentageCalls": "25"', { percentageCalls: "25" }, "/percentageCalls"],
        ['"percentageActors": true', { percentageActors: true }, "/percentageActors"],
        ['"status": 1', { status: 1 }, "/status"],
        ['"status": null', { status: null }, "/status"],
        ['"description": null', { description: null }, "/description"],
        ['"description": 5', { description: 5 }, "/description"],
        ['"addActors": "u1"', { addActors: "u1" }, "/addActors"],
        ['"addActors": [1]', { addActors: [1] }, "/addActors/0"],
        ['"removeSegments": {}', { removeSegments: {} }, "/removeSegments"],
      ];
      for (const [label, body, path] of wrongTypes) {
        test(`wrong type ${label} → 400, errors[0].path ${path}, nothing changed`, async () => {
          beforeState = await fingerprint([flagPath("shape")]);
          expectFieldError(
            await server.request("PATCH", flagPath("shape"), { body: { description: "must not stick", ...body } }),
            path,
          );
          assert.deepEqual(await fingerprint([flagPath("shape")]), beforeState);
        });
      }
    });

    describe("percentages: exactly one of 0, 1, 2, 5, 10, 25, 50, 75, 100", () => {
      for (const field of ["percentageActors", "percentageCalls"]) {
        test(`${field}: every allowed value is accepted and stored`, async () => {
          await newFlag(`pct-ok-${field}`);
          for (const value of ALLOWED_PERCENTAGES) {
            const res = await server.request("PATCH", flagPath(`pct-ok-${field}`), { body: { [field]: value } });
            assert.equal(res.status, 200, `${field}=${value}: ${res.text}`);
            assert.equal(res.body[field], value);
            const got = await server.request("GET", flagPath(`pct-ok-${field}`));
            assert.equal(got.body[field], value);
          }
        });

        test(`${field}: 3, 101, -1, 50.5 (and 4, 99, 1000) → 400 at /${field}, nothing changed`, async () => {
          await newFlag(`pct-bad-${field}`, { [field]: 25 });
          const beforeState = await fingerprint([flagPath(`pct-bad-${field}`)]);
          for (const value of [3, 101, -1, 50.5, 4, 99, 1000]) {
            const res = await server.request("PATCH", flagPath(`pct-bad-${field}`), {
              body: { status: "enabled", [field]: value },
            });
            try {
              expectFieldError(res, `/${field}`);
            } catch (error) {
              throw new Error(`${field}=${value}: ${(error as Error).message}`);
            }
          }
          assert.deepEqual(await fingerprint([flagPath(`pct-bad-${field}`)]), beforeState);
        });
      }
    });

    test("status outside enabled/disabled/conditional → 400 at /status, nothing changed", async () => {
      await newFlag("status-bad");
      const beforeState = await fingerprint([flagPath("status-bad")]);
      for (const status of ["on", "Enabled", "ENABLED", "", "paused", "enabled ", "true"]) {
        const res = await server.request("PATCH", flagPath("status-bad"), { body: { status } });
        try {
          expectFieldError(res, "/status");
        } catch (error) {
          throw new Error(`status=${JSON.stringify(status)}: ${(error as Error).message}`);
        }
      }
      assert.deepEqual(await fingerprint([flagPath("status-bad")]), beforeState);
      for (const status of ["enabled", "conditional", "disabled"]) {
        const res = await server.request("PATCH", flagPath("status-bad"), { body: { status } });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.status, status);
      }
    });

    describe("flag names: 1–128 of A–Z a–z 0–9 . _ - :, starting with a letter or digit", () => {
      for (const name of ["-x", ".x", "_x", ":x", "a b", "é", "aé", "a/b", "a".repeat(129)]) {
        test(`create "${name.length > 20 ? `${name.length} chars` : name}" → 400, nothing created`, async () => {
          const beforeState = await fingerprint();
          const res = await server.request("POST", flagPath(encodeURIComponent(name)), { body: {} });
          expectFieldError(res, "/params/flagName");
          assert.deepEqual(await fingerprint(), beforeState);
        });
      }
      for (const name of ["a".repeat(128), "a:b.c_d-e", "9lives", "Z"]) {
        test(`create "${name.length > 20 ? `${name.length} chars` : name}" → 201 with that name`, async () => {
          const res = await server.request("POST", flagPath(name), { body: {} });
          assert.equal(res.status, 201, res.text);
          assert.equal(res.body.name, name);
          const got = await server.request("GET", flagPath(name));
          assert.equal(got.status, 200);
          assert.equal(got.body.name, name);
        });
      }
    });

    describe("descriptions: at most 1,024 characters", () => {
      test("create with 1,024 → 201; with 1,025 → 400 at /description and nothing created", async () => {
        const ok = await server.request("POST", flagPath("desc-1024"), { body: { description: "d".repeat(1024) } });
        assert.equal(ok.status, 201, ok.text);
        assert.equal(ok.body.description, "d".repeat(1024));
        const beforeState = await fingerprint();
        expectFieldError(
          await server.request("POST", flagPath("desc-1025"), { body: { description: "d".repeat(1025) } }),
          "/description",
        );
        assert.deepEqual(await fingerprint(), beforeState);
      });

      test("update with 1,024 → 200; with 1,025 → 400 at /description and unchanged", async () => {
        await newFlag("desc-upd");
        const ok = await server.request("PATCH", flagPath("desc-upd"), { body: { description: "e".repeat(1024) } });
        assert.equal(ok.status, 200, ok.text);
        assert.equal(ok.body.description, "e".repeat(1024));
        const beforeState = await fingerprint([flagPath("desc-upd")]);
        expectFieldError(
          await server.request("PATCH", flagPath("desc-upd"), { body: { description: "f".repeat(1025) } }),
          "/description",
        );
        assert.deepEqual(await fingerprint([flagPath("desc-upd")]), beforeState);
      });

      test("segment description 1,024 → 201; 1,025 → 400 at /description", async () => {
        const ok = await server.request("POST", `/projects/${project}/segments`, {
          body: { name: "desc-seg", description: "s".repeat(1024) },
        });
        assert.equal(ok.status, 201, ok.text);
        const beforeState = await fingerprint();
        expectFieldError(
          await server.request("POST", `/projects/${project}/segments`, {
            body: { name: "desc-seg-2", description: "s".repeat(1025) },
          }),
          "/description",
        );
        expectFieldError(
          await server.request("PATCH", `/projects/${project}/segments/${ok.body.id}`, {
            body: { description: "s".repeat(1025) },
          }),
          "/description",
        );
        assert.deepEqual(await fingerprint(), beforeState);
      });
    });

    describe("id lists: at most 1,000 ids, duplicates collapse, no id both added and removed", () => {
      const ids = (n: number, prefix = "a") => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

      test("flag addActors / removeActors: 1,000 → 200, 1,001 → 400 and unchanged", async () => {
        await newFlag("many-actors", { status: "conditional" });
        const added = await server.request("PATCH", flagPath("many-actors"), { body: { addActors: ids(1000) } });
        assert.equal(added.status, 200, added.text);
        assert.equal(await check("many-actors", ["a-0"]), true);
        assert.equal(await check("many-actors", ["a-999"]), true);
        const extra = [flagPath("many-actors"), `/projects/${project}/actors/b-0`];
        const beforeState = await fingerprint(extra);
        expectFieldError(
          await server.request("PATCH", flagPath("many-actors"), {
            body: { description: "no", addActors: ids(1001, "b") },
          }),
          "/addActors",
        );
        expectFieldError(
          await server.request("PATCH", flagPath("many-actors"), {
            body: { description: "no", removeActors: ids(1001) },
          }),
          "/removeActors",
        );
        assert.deepEqual(await fingerprint(extra), beforeState);
        assert.equal(await check("many-actors", ["a-500"]), true, "the refused removal removed nothing");
        assert.equal(await check("many-actors", ["b-0"]), false, "the refused addition added nothing");
        const removed = await server.request("PATCH", flagPath("many-actors"), { body: { removeActors: ids(1000) } });
        assert.equal(removed.status, 200, removed.text);
        assert.equal(await check("many-actors", ["a-0"]), false);
        assert.equal(await check("many-actors", ["a-999"]), false);
      });

      test("flag addSegments / removeSegments: 1,000 → 200, 1,001 → 400 and unchanged", async () => {
        // A project of its own, so that its 1,000 segments do not crowd the others' lists.
        const bulk = await createProject(server);
        const segmentIds: string[] = [];
        const names = ids(1000, "bulk");
        for (let i = 0; i < names.length; i += 25) {
          segmentIds.push(
            ...(await Promise.all(
              names.slice(i, i + 25).map(async (name) => {
                const res = await server.request("POST", `/projects/${bulk}/segments`, { body: { name } });
                assert.equal(res.status, 201, res.text);
                return res.body.id as string;
              }),
            )),
          );
        }
        const flag = `/projects/${bulk}/flags/many-segments`;
        assert.equal((await server.request("POST", flag, { body: {} })).status, 201);
        /** Every segment attached to the flag, following the cursors. */
        const attached = async (): Promise<string[]> => {
          const out: string[] = [];
          let after: string | null = null;
          do {
            const page: ApiResponse = await server.request(
              "GET",
              `${flag}/segments?limit=100${after === null ? "" : `&after=${encodeURIComponent(after)}`}`,
            );
            assert.equal(page.status, 200, page.text);
            out.push(...page.body.data.map((seg: { id: string }) => seg.id));
            after = page.body.pagination.after;
          } while (after !== null);
          return out.sort();
        };
        const added = await server.request("PATCH", flag, { body: { addSegments: segmentIds } });
        assert.equal(added.status, 200, added.text);
        assert.deepEqual(await attached(), [...segmentIds].sort());
        const state = async () => [
          ...(await Promise.all(
            [flag, `/projects/${bulk}/flags`].map(async (p) => (await server.request("GET", p)).text),
          )),
          ...(await attached()),
        ];
        const beforeState = await state();
        expectFieldError(
          await server.request("PATCH", flag, {
            body: { description: "no", addSegments: [...segmentIds, "seg_one_too_many"] },
          }),
          "/addSegments",
        );
        expectFieldError(
          await server.request("PATCH", flag, {
            body: { description: "no", removeSegments: [...segmentIds, "seg_one_too_many"] },
          }),
          "/removeSegments",
        );
        assert.deepEqual(await state(), beforeState);
        const removed = await server.request("PATCH", flag, { body: { removeSegments: segmentIds } });
        assert.equal(removed.status, 200, removed.text);
        assert.deepEqual(await attached(), []);
      });

      test("segment addActors / removeActors: 1,000 → 200, 1,001 → 400 and unchanged", async () => {
        const seg = await newSegment("many-members");
        const path = `/projects/${project}/segments/${seg}`;
        const added = await server.request("PATCH", path, { body: { addActors: ids(1000, "m") } });
        assert.equal(added.status, 200, added.text);
        assert.equal(added.body.latestActors.length, 10);
        const extra = [path, `/projects/${project}/actors/n-0/segments`, `/projects/${project}/actors/m-0/segments`];
        const beforeState = await fingerprint(extra);
        expectFieldError(
          await server.request("PATCH", path, { body: { description: "no", addActors: ids(1001, "n") } }),
          "/addActors",
        );
        expectFieldError(
          await server.request("PATCH", path, { body: { description: "no", removeActors: ids(1001, "m") } }),
          "/removeActors",
        );
        assert.deepEqual(await fingerprint(extra), beforeState);
        const removed = await server.request("PATCH", path, { body: { removeActors: ids(1000, "m") } });
        assert.equal(removed.status, 200, removed.text);
        assert.deepEqual(removed.body.latestActors, []);
      });

      test("duplicates collapse: 1,000 copies of one id are accepted and attach it once", async () => {
        const seg = await newSegment("dup-seg");
        await newFlag("dups", { status: "conditional" });
        const res = await server.request("PATCH", flagPath("dups"), {
          body: { addActors: Array(1000).fill("dup-actor"), addSegments: Array(1000).fill(seg) },
        });
        assert.equal(res.status, 200, res.text);
        const segs = await server.request("GET", `${flagPath("dups")}/segments`);
        assert.deepEqual(
          segs.body.data.map((s: { id: string }) => s.id),
          [seg],
        );
        const flags = await server.request("GET", `/projects/${project}/actors/dup-actor/flags?limit=100`);
        assert.deepEqual(
          flags.body.data.map((f: { name: string }) => f.name),
          ["dups"],
        );
        const members = await server.request("PATCH", `/projects/${project}/segments/${seg}`, {
          body: { addActors: ["dup-member", "dup-member", "dup-member"] },
        });
        assert.equal(members.status, 200, members.text);
        assert.deepEqual(
          members.body.latestActors.map((a: { actorId: string }) => a.actorId),
          ["dup-member"],
        );
        const removed = await server.request("PATCH", flagPath("dups"), {
          body: { removeActors: ["dup-actor", "dup-actor"], removeSegments: [seg, seg] },
        });
        assert.equal(removed.status, 200, removed.text);
        assert.equal(await check("dups", ["dup-actor"]), false);
      });

      test("an id both added and removed in one request → 400, nothing applied", async () => {
        const seg = await newSegment("both-seg", ["both-member"]);
        await newFlag("both", { status: "conditional", addActors: ["kept"] });
        const segPath = `/projects/${project}/segments/${seg}`;
        const extra = [
          flagPath("both"),
          `${flagPath("both")}/segments`,
          segPath,
          `/projects/${project}/actors/x/flags`,
        ];
        const beforeState = await fingerprint(extra);
        const refused: [string, Record<string, unknown>][] = [
          [flagPath("both"), { description: "no", addActors: ["x"], removeActors: ["x"] }],
          [flagPath("both"), { description: "no", addActors: ["x", "x"], removeActors: ["kept", "x"] }],
          [flagPath("both"), { status: "enabled", addSegments: [seg], removeSegments: [seg] }],
          [segPath, { description: "no", addActors: ["x"], removeActors: ["x"] }],
          [segPath, { name: "renamed", addActors: ["both-member", "y"], removeActors: ["both-member"] }],
        ];
        for (const [path, body] of refused) {
          const res = await server.request("PATCH", path, { body });
          expectProblem(res, 400, "invalid_request");
          assert.ok(Array.isArray(res.body.errors) && res.body.errors.length > 0, res.text);
          assert.match(res.body.errors[0].path, /^\/(add|remove)(Actors|Segments)$/, res.text);
        }
        assert.deepEqual(await fingerprint(extra), beforeState);
        assert.equal(await check("both", ["x"]), false);
        assert.equal(await check("both", ["kept"]), true);
      });
    });

    test("addSegments naming an unknown segment → 404 segment_not_found and nothing else applied", async () => {
      const seg = await newSegment("known-seg", ["member-1"]);
      await newFlag("partial", { status: "conditional" });
      const extra = [
        flagPath("partial"),
        `${flagPath("partial")}/segments`,
        `/projects/${project}/actors/newcomer`,
        `/projects/${project}/actors/newcomer/flags`,
        `/projects/${project}/segments/${seg}/flags`,
      ];
      const beforeState = await fingerprint(extra);
      const attempts: Record<string, unknown>[] = [
        {
          description: "applied?",
          percentageActors: 100,
          percentageCalls: 100,
          addActors: ["newcomer"],
          addSegments: [seg, "seg_does_not_exist"],
        },
        { status: "enabled", addSegments: ["seg_does_not_exist", seg] },
      ];
      for (const body of attempts) {
        const res = await server.request("PATCH", flagPath("partial"), { body });
        expectProblem(res, 404, "segment_not_found");
      }
      assert.deepEqual(await fingerprint(extra), beforeState);
      expectProblem(await server.request("GET", `/projects/${project}/actors/newcomer`), 404, "actor_not_found");
      const got = await server.request("GET", flagPath("partial"));
      assert.equal(got.body.description, "flag partial");
      assert.equal(got.body.status, "conditional");
      assert.equal(got.body.percentageActors, 0);
      assert.equal(got.body.percentageCalls, 0);
      assert.equal(await check("partial", ["newcomer"]), false, "addActors was not applied");
      assert.equal(await check("partial", ["member-1"]), false, "the known segment was not attached");
      assert.equal(await check("partial"), false, "percentageCalls and status were not applied");
    });

    describe("prototype pollution attempts → 400, never 500, nothing changed", () => {
      const bodies = [
        '{"__proto__": {"status": "enabled", "polluted": "yes"}}',
        '{"constructor": {"prototype": {"status": "enabled", "polluted": "yes"}}}',
        '{"description": "x", "__proto__": {"polluted": "yes"}}',
        '{"description": "x", "constructor": {"prototype": {"polluted": "yes"}}}',
        '{"addActors": ["a"], "__proto__": {"isAdmin": true}}',
        '{"prototype": {"polluted": "yes"}}',
        '{"__proto__": null}',
      ];
      const targets: { method: string; path: () => string }[] = [
        { method: "PATCH", path: () => flagPath("proto") },
        { method: "POST", path: () => flagPath("proto-new") },
        { method: "POST", path: () => `/projects/${project}/segments` },
        { method: "POST", path: () => "/projects" },
        { method: "POST", path: () => `/projects/${project}/keys` },
        { method: "PUT", path: () => `/projects/${project}/actors/proto-actor` },
      ];
      test("in JSON bodies", async () => {
        await newFlag("proto");
        const extra = [flagPath("proto"), flagPath("proto-new"), `/projects/${project}/actors/proto-actor`];
        const beforeState = await fingerprint(extra);
        for (const body of bodies) {
          for (const t of targets) {
            const res = await server.request(t.method, t.path(), {
              rawBody: body,
              headers: { "content-type": "application/json" },
            });
            try {
              expectProblem(res, 400, "invalid_request");
            } catch (error) {
              throw new Error(`${t.method} ${t.path()} ${body}: ${(error as Error).message}`);
            }
          }
        }
        assert.deepEqual(await fingerprint(extra), beforeState);
        const plain: Record<string, unknown> = {};
        assert.equal(plain.polluted, undefined, "Object.prototype was polluted");
        assert.equal(plain.status, undefined, "Object.prototype was polluted");
        assert.equal(plain.isAdmin, undefined, "Object.prototype was polluted");
      });

      test("in query strings", async () => {
        await newFlag("proto-q");
        for (const query of [
          "__proto__[polluted]=yes",
          "constructor[prototype][polluted]=yes",
          "__proto__=a&__proto__=b",
          "__proto__[]=a",
          "constructor=x",
        ]) {
          for (const path of [`/projects/${project}/flags`, `${flagPath("proto-q")}/check`, "/projects"]) {
            const res = await server.request("GET", `${path}?${query}`);
            try {
              expectProblem(res, 400, "invalid_request");
            } catch (error) {
              throw new Error(`${path}?${query}: ${(error as Error).message}`);
            }
          }
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined, "Object.prototype was polluted");
      });
    });

    describe("NUL and control characters never cause a 5xx", () => {
      const NUL_CURSOR = Buffer.from(JSON.stringify(["\u0000"])).toString("base64url");
      let segment: string;
      before(async () => {
        await newFlag("nul-target");
        segment = await newSegment("nul-seg");
      });

      // NUL can be stored nowhere (PostgreSQL refuses it outright), so a request carrying one is invalid
      // on both engines: 400 invalid_request naming the parameter, and nothing changes.
      test("in path parameters: 400 invalid_request naming the parameter, nothing changed", async () => {
        const beforeState = await fingerprint([flagPath("nul-target")]);
        const cases: [string, string, string, unknown?][] = [
          ["GET", `/projects/${project}/flags/%00`, "flag_not_found"],
          ["GET", `/projects/${project}/flags/a%00b`, "flag_not_found"],
          ["PATCH", `/projects/${project}/flags/%00`, "flag_not_found", {}],
          ["DELETE", `/projects/${project}/flags/%00`, "flag_not_found"],
          ["GET", `/projects/${project}/flags/%00/segments`, "flag_not_found"],
          ["GET", `/projects/${project}/segments/%00`, "segment_not_found"],
          ["PATCH", `/projects/${project}/segments/%00`, "segment_not_found", {}],
          ["DELETE", `/projects/${project}/segments/%00`, "segment_not_found"],
          ["GET", `/projects/${project}/segments/%00/flags`, "segment_not_found"],
          ["GET", "/projects/%00", "project_not_found"],
          ["GET", "/projects/%00/flags", "project_not_found"],
          ["GET", "/projects/%00/segments", "project_not_found"],
          ["DELETE", "/projects/%00", "project_not_found"],
          ["DELETE", `/projects/${project}/keys/%00`, "key_not_found"],
        ];
        const wrong: string[] = [];
        for (const [method, path, _code, body] of cases) {
          const res = await server.request(method, path, body === undefined ? {} : { body });
          try {
            expectProblem(res, 400, "invalid_request");
            assert.match(res.body.errors[0].path, /^\/params\//);
          } catch (error) {
            wrong.push(`${method} ${path}: ${(error as Error).message}`);
          }
        }
        assert.deepEqual(wrong, []);
        assert.deepEqual(await fingerprint([flagPath("nul-target")]), beforeState);
        // The check never reaches the database: a flag name with NUL simply names no flag.
        expectProblem(await server.request("GET", `/projects/${project}/flags/%00/check`), 404, "flag_not_found");
      });

      test("in actor ids: 400, control characters are not allowed", async () => {
        for (const path of [
          `/projects/${project}/actors/%00/flags`,
          `/projects/${project}/actors/a%01b/segments`,
          `/projects/${project}/actors/%7F`,
          `${flagPath("nul-target")}/check?actorIds=%00`,
          `${flagPath("nul-target")}/check?actorIds=ok&actorIds=%1F`,
        ]) {
          expectProblem(await server.request("GET", path), 400, "invalid_request");
        }
        for (const addActors of [["\u0000"], ["ok", "a\u0001"]]) {
          const res = await server.request("PATCH", flagPath("nul-target"), { body: { addActors } });
          expectProblem(res, 400, "invalid_request");
          assert.match(res.body.errors[0].path, /^\/addActors\/\d+$/);
        }
      });

      test("in query values and cursors: 400 invalid_request, never a 5xx", async () => {
        const wrong: string[] = [];
        for (const query of ["name=%00", "q=%00", "q=a%00b", "name=%00&q=%00"]) {
          const res = await server.request("GET", `/projects/${project}/flags?${query}`);
          try {
            expectProblem(res, 400, "invalid_request");
            assert.match(res.body.errors[0].path, /^\/query\/(name|q)$/);
          } catch (error) {
            wrong.push(`?${query}: ${(error as Error).message}`);
          }
        }
        for (const path of [
          `/projects/${project}/flags?after=${NUL_CURSOR}`,
          `/projects/${project}/flags?before=${NUL_CURSOR}`,
          `/projects/${project}/segments?after=${NUL_CURSOR}`,
          `/projects?after=${NUL_CURSOR}`,
          `/projects/${project}/actors/u/flags?after=${NUL_CURSOR}`,
        ]) {
          const res = await server.request("GET", path);
          if (res.status === 200) continue;
          try {
            expectProblem(res, 400, "invalid_request");
          } catch (error) {
            wrong.push(`${path}: ${(error as Error).message}`);
          }
        }
        assert.deepEqual(wrong, []);
      });

      test("in body strings: stored exactly, or refused with 400 and nothing changed", async () => {
        const cases: [string, string, Record<string, unknown>, string, string][] = [
          ["PATCH", flagPath("nul-target"), { description: "a\u0000b" }, "/description", flagPath("nul-target")],
          ["POST", flagPath("nul-new"), { description: "\u0000" }, "/description", flagPath("nul-new")],
          [
            "PATCH",
            `/projects/${project}/segments/${segment}`,
            { description: "x\u0000y" },
            "/description",
            `/projects/${project}/segments/${segment}`,
          ],
          [
            "PATCH",
            `/projects/${project}/segments/${segment}`,
            { name: "x\u0000y" },
            "/name",
            `/projects/${project}/segments/${segment}`,
          ],
          [
            "PUT",
            `/projects/${project}/actors/nul-actor`,
            { name: "n\u0000" },
            "/name",
            `/projects/${project}/actors/nul-actor`,
          ],
        ];
        const wrong: string[] = [];
        for (const [method, path, body, field, readBack] of cases) {
          const beforeState = await fingerprint([readBack]);
          const res = await server.request(method, path, { body });
          const [key, value] = Object.entries(body)[0] as [string, string];
          if (res.status === 200 || res.status === 201) {
            const got = await server.request("GET", readBack);
            if (got.body?.[key] !== value) wrong.push(`${method} ${path}: stored ${JSON.stringify(got.body?.[key])}`);
            continue;
          }
          try {
            expectFieldError(res, field);
            assert.deepEqual(await fingerprint([readBack]), beforeState);
          } catch (error) {
            wrong.push(`${method} ${path} ${JSON.stringify(body)}: ${(error as Error).message}`);
          }
        }
        assert.deepEqual(wrong, []);
      });

      test("in segment ids of a flag update: 400, nothing applied", async () => {
        const beforeState = await fingerprint([flagPath("nul-target"), `${flagPath("nul-target")}/segments`]);
        const refused = await server.request("PATCH", flagPath("nul-target"), {
          body: { description: "no", addSegments: [segment, "\u0000"] },
        });
        expectProblem(refused, 400, "invalid_request");
        assert.equal(refused.body.errors[0].path, "/addSegments/1");
        assert.deepEqual(
          await fingerprint([flagPath("nul-target"), `${flagPath("nul-target")}/segments`]),
          beforeState,
        );
        const removed = await server.request("PATCH", flagPath("nul-target"), { body: { removeSegments: ["\u0000"] } });
        expectProblem(removed, 400, "invalid_request");
      });
    });

    describe("malformed URLs are answered with problem details", () => {
      for (const segment of ["%", "%G0", "a%", "%C3", "%C0%AE", "%ED%A0%80", "%FF"]) {
        test(`a path segment "${segment}" (bad percent-encoding) → 400 invalid_request`, async () => {
          for (const path of [
            `/projects/${segment}`,
            `/projects/${project}/flags/${segment}`,
            `/projects/${project}/actors/${segment}/flags`,
          ]) {
            const res = await server.request("GET", path);
            try {
              expectProblem(res, 400, "invalid_request");
            } catch (error) {
              throw new Error(`GET ${path}: ${(error as Error).message}`);
            }
          }
        });
      }

      test("a path parameter of 2,000 characters → a 400 or 404 problem, not another format", async () => {
        const long = "a".repeat(2000);
        for (const [method, path] of [
          ["GET", flagPath(long)],
          ["POST", flagPath(long)],
          ["GET", `/projects/${long}`],
          ["GET", `/projects/${project}/segments/${long}`],
          ["GET", `/projects/${project}/actors/${long}/flags`],
        ] as const) {
          const res = await server.request(method, path, method === "POST" ? { body: {} } : {});
          const code = res.body?.code;
          assert.ok(
            res.status === 400 || res.status === 404,
            `${method} ${path.slice(0, 60)}…: ${res.status} ${res.text.slice(0, 200)}`,
          );
          expectProblem(res, res.status, typeof code === "string" ? code : "(no code)");
        }
      });
    });

    test("a 500 is problem+json with code internal and leaks nothing", async () => {
      // No route fails on purpose, so a stored row the service never writes (an unknown status) provokes it.
      const broken = await createProject(server);
      const made = await server.request("POST", `/projects/${broken}/flags/broken`, { body: { description: "b" } });
      assert.equal(made.status, 201, made.text);
      await server.database.db
        .updateTable("flag_configs")
        .set({ status: "no-such-status" })
        .where("flag_id", "in", (eb) => eb.selectFrom("flags").select("id").where("project_id", "=", broken))
        .execute();
      for (const path of [`/projects/${broken}/flags/broken`, `/projects/${broken}/flags`]) {
        const res = await server.request("GET", path);
        expectProblem(res, 500, "internal");
        assert.deepEqual(Object.keys(res.body).sort(), ["code", "detail", "status", "title", "type"]);
        for (const leak of [
          /no-such-status/,
          /\bat [\w.<>]+ \(/,
          /node_modules|\/src\/|\.js\b|\.ts\b/,
          /select|from\s+"?flags|sqlite|postgres|kysely/i,
          /Error\b/,
          /schema|serializ|anyOf|#\//i,
        ]) {
          assert.doesNotMatch(res.text, leak, `${path} leaks internals: ${res.text}`);
        }
      }
    });
  });

  describe(`rate limiting [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dialect, env: { RATE_LIMIT_PER_MINUTE: "5" } });
    });
    after(() => server.close());

    test("the 6th request in a minute from one key → 429 rate_limited with Retry-After; other keys keep their own count", async () => {
      // Admin key: requests 1–3.
      const project = await createProject(server);
      const writer = await createKey(server, project, "write");
      const made = await server.request("POST", `/projects/${project}/flags/limited`, { body: { description: "d" } });
      assert.equal(made.status, 201, made.text);
      // Write key: requests 1–5 succeed.
      for (let i = 1; i <= 5; i++) {
        const res = await server.request("GET", `/projects/${project}/flags/limited`, { key: writer.key });
        assert.equal(res.status, 200, `request ${i}: ${res.text}`);
      }
      // Write key: request 6 is refused, and the write it carried is not applied.
      const sixth = await server.request("PATCH", `/projects/${project}/flags/limited`, {
        key: writer.key,
        body: { description: "over the limit", status: "enabled" },
      });
      expectProblem(sixth, 429, "rate_limited");
      const retryAfter = sixth.headers.get("retry-after");
      assert.ok(retryAfter !== null, "429 without Retry-After");
      assert.match(retryAfter, /^\d+$/);
      assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `Retry-After ${retryAfter}`);
      // Admin key: requests 4 and 5 still succeed; the flag is unchanged.
      const got = await server.request("GET", `/projects/${project}/flags/limited`);
      assert.equal(got.status, 200, got.text);
      assert.equal(got.body.description, "d");
      assert.equal(got.body.status, "disabled");
      const fifth = await server.request("GET", `/projects/${project}/flags`);
      assert.equal(fifth.status, 200, fifth.text);
      // Admin key: request 6 is refused.
      expectProblem(await server.request("GET", `/projects/${project}/flags`), 429, "rate_limited");
    });
  });
}
