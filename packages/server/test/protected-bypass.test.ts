// Protected environments cannot be changed around (issue 32, finding 4): deleting a flag, changing the value
// of a variant a protected environment's configuration serves, and deleting a segment attached there all
// change what that environment serves, so they need its right (a project admin's), whichever key or person
// makes them; what does not change what it serves (a description, a variant it does not serve) stays a
// writer's.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  expectProblem,
  type RequestOptions,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { asKey, asSession, createPerson, grant, signIn } from "./helpers/people.js";
import { createFlag, patchOk, stringVariants } from "./helpers/targeting.js";

for (const dialect of DIALECTS) {
  describe(`protected environments, changed around [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    /** The writers: an unbound write key, a write key bound to staging, a person with a write grant. */
    let writers: [string, RequestOptions][];
    /** The project's admins other than the admin key: a person with the admin grant. */
    let owner: RequestOptions;
    const base = () => `/projects/${project}`;

    const serviceKey = async (environment: string | null) => {
      const res = await server.request("POST", `${base()}/keys`, {
        body: { role: "write", name: `write ${environment}`, environment },
      });
      assert.equal(res.status, 201, res.text);
      return asKey(res.body.key);
    };

    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      const env = await server.request("POST", `${base()}/environments`, { body: { id: "staging", name: "Staging" } });
      assert.equal(env.status, 201, env.text);
      const writer = await createPerson(server);
      const admin = await createPerson(server);
      await grant(server, project, writer.id, "write");
      await grant(server, project, admin.id, "admin");
      writers = [
        ["an unbound write key", await serviceKey(null)],
        ["a write key bound to staging", await serviceKey("staging")],
        ["a writer's session", asSession(await signIn(server, writer.email))],
      ];
      owner = asSession(await signIn(server, admin.email));
      const protect = await server.request("PATCH", `${base()}/environments/production`, { body: { protected: true } });
      assert.equal(protect.status, 200, protect.text);
    });
    after(() => server.close());

    test("deleting a flag is refused to writers while an environment is protected; a project admin deletes it", async () => {
      await createFlag(server, project, "doomed");
      for (const [label, options] of writers) {
        const res = await server.request("DELETE", `${base()}/flags/doomed`, options);
        // A key bound to staging may not delete across environments at all; everyone else meets the protection.
        if (label.startsWith("a write key bound")) expectProblem(res, 403, "forbidden");
        else {
          expectProblem(res, 403, "environment_protected");
          assert.match(
            res.body.detail,
            /Deleting flag "doomed" changes what protected environment "production" serves/,
          );
        }
      }
      assert.equal((await server.request("GET", `${base()}/flags/doomed`)).status, 200, "still there");
      assert.equal((await server.request("DELETE", `${base()}/flags/doomed`, owner)).status, 204);

      // Unprotected, a writer may delete again.
      await createFlag(server, project, "doomed");
      await server.request("PATCH", `${base()}/environments/production`, { body: { protected: false } });
      try {
        assert.equal((await server.request("DELETE", `${base()}/flags/doomed`, writers[0]![1])).status, 204);
      } finally {
        await server.request("PATCH", `${base()}/environments/production`, { body: { protected: true } });
      }
    });

    test("changing the value of a variant production serves is refused to writers; other variants stay theirs", async () => {
      await createFlag(server, project, "button", {
        type: "string",
        variants: stringVariants("blue", "green", "red", "spare"),
        onVariant: "green",
        offVariant: "blue",
      });
      // Production serves green and blue, and red by a rule; staging serves spare by a rule.
      await patchOk(server, project, "button", {
        rules: [
          {
            id: "vip",
            conditions: [{ attribute: "plan", operator: "in", values: ["vip"] }],
            serve: { variant: "red" },
          },
        ],
      });
      await patchOk(
        server,
        project,
        "button",
        {
          rules: [
            {
              id: "half",
              conditions: [],
              serve: {
                split: {
                  weights: [
                    { variant: "spare", weight: 50 },
                    { variant: "green", weight: 50 },
                  ],
                },
              },
            },
          ],
        },
        "staging",
      );
      const withValue = (key: string, value: string) =>
        ["blue", "green", "red", "spare"].map((k) => ({ key: k, value: k === key ? value : k }));
      for (const [label, options] of writers) {
        for (const key of ["green", "blue", "red"]) {
          const path = label.startsWith("a write key bound")
            ? `${base()}/flags/button?environment=staging`
            : `${base()}/flags/button`;
          const res = await server.request("PATCH", path, { ...options, body: { variants: withValue(key, "#000") } });
          expectProblem(res, 403, "environment_protected");
          assert.match(
            res.body.detail,
            new RegExp(`value of variant "${key}" changes what protected environment "production"`),
          );
        }
      }
      const unchanged = await server.request("GET", `${base()}/flags/button`);
      assert.deepEqual(
        unchanged.body.variants.map((v: { value: string }) => v.value),
        ["blue", "green", "red", "spare"],
      );
      // spare is served in staging only (unprotected); a description is the definition's.
      for (const [label, options] of writers) {
        const path = label.startsWith("a write key bound")
          ? `${base()}/flags/button?environment=staging`
          : `${base()}/flags/button`;
        const spare = await server.request("PATCH", path, {
          ...options,
          body: { variants: withValue("spare", `spare by ${label}`), description: label },
        });
        assert.equal(spare.status, 200, `${label}: ${spare.text}`);
      }
      // The project's admin may change what production serves.
      const res = await server.request("PATCH", `${base()}/flags/button`, {
        ...owner,
        body: { variants: withValue("green", "#0f0") },
      });
      assert.equal(res.status, 200, res.text);
      const check = await server.request("GET", `${base()}/flags/button/check?attributes[plan]=x`);
      assert.equal(check.status, 200, check.text);
    });

    test("deleting a segment attached in production is refused to writers; attached elsewhere only, it goes", async () => {
      const make = async (name: string) => {
        const res = await server.request("POST", `${base()}/segments`, { body: { name } });
        assert.equal(res.status, 201, res.text);
        return res.body.id as string;
      };
      const guarded = await make("guarded");
      const free = await make("free");
      await createFlag(server, project, "seg-flag");
      await patchOk(server, project, "seg-flag", { addSegments: [guarded] });
      await patchOk(server, project, "seg-flag", { addSegments: [free] }, "staging");
      for (const [, options] of writers) {
        const res = await server.request("DELETE", `${base()}/segments/${guarded}`, options);
        expectProblem(res, 403, "environment_protected");
      }
      const kept = await server.request("GET", `${base()}/flags/seg-flag/segments`);
      assert.deepEqual(
        kept.body.data.map((s: { id: string }) => s.id),
        [guarded],
      );
      assert.equal((await server.request("DELETE", `${base()}/segments/${free}`, writers[2]![1])).status, 204);
      assert.equal((await server.request("DELETE", `${base()}/segments/${guarded}`, owner)).status, 204);
    });
  });
}
