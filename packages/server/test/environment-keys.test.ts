// Keys and the binding rule (issue 24), as a role matrix: every flag route × {admin, write bound to none,
// write bound to staging, read bound to staging, check bound to staging} × {its own environment, another,
// none named}. A key bound to an environment acts on that one only: it never reads or changes another's
// configuration (403 when it names another), and its flag answers' `environments` show its own alone.
// Then the project-wide routes (issue 31): environments, keys, webhooks, access and the project itself ×
// service and personal keys bound to staging or to none, sessions and the admin key.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  type ApiResponse,
  createProject,
  DIALECTS,
  expectProblem,
  type RequestOptions,
  startServer,
  type TestServer,
} from "@flagstaff/test-harness";
import { addEnvironment, addSegment, bindKey, inEnvironment, type Key, patchFlag } from "./helpers/environments.js";
import { asKey, asSession, createPerson, grant, outcome, personalKey, signIn } from "./helpers/people.js";

const ENVIRONMENTS = ["production", "staging"] as const;
type Access = "read" | "write" | "check";
const RANK: Record<Access, number> = { check: 1, read: 2, write: 3 };

interface Caller {
  readonly label: string;
  readonly key: string;
  /** Its role's rank: admin keys rank above every project role. */
  readonly rank: number;
  /** The environment it is bound to; null: none. */
  readonly environment: string | null;
}

/**
 * One flag route as the matrix calls it: the request, made with a key and an optional `environment`, and
 * how to tell from the answer (or a look afterwards, as admin) which environment it acted on.
 */
interface Route {
  readonly name: string;
  readonly access: Access;
  call(key: string, environment: string | undefined): Promise<ApiResponse>;
  /** The environment the successful request acted on. */
  actedOn(res: ApiResponse): Promise<string> | string;
  /** Flag answers in the response body, whose `environments` the binding limits. */
  flags?(res: ApiResponse): any[];
}

for (const dialect of DIALECTS) {
  describe(`role matrix: keys bound to an environment [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    let segments: Record<string, string>;
    const callers: Caller[] = [];
    let serial = 0;
    const base = () => `/projects/${project}`;
    const as = (key: string, method: string, path: string, environment?: string, body?: unknown) =>
      server.request(method, inEnvironment(`${base()}${path}`, environment), {
        key,
        ...(body === undefined ? {} : { body }),
      });
    /** Which environment has an actor attached to flag m, looked up as admin. */
    const attachedIn = async (actor: string, flag = "m") => {
      const found: string[] = [];
      for (const environment of ENVIRONMENTS) {
        const res = await as(ADMIN_KEY, "GET", `/flags/${flag}/actors?q=${actor}`, environment);
        if (res.body.data.some((m: any) => m.actorId === actor)) found.push(environment);
      }
      assert.equal(found.length, 1, `${actor} attached in exactly one environment: ${found}`);
      return found[0] as string;
    };
    /** "staging" or "production", by the fixture's answers: in-staging is on in staging only. */
    const byAnswer = (enabled: boolean) => (enabled ? "staging" : "production");

    const routes: Route[] = [
      {
        name: "GET flags",
        access: "read",
        call: (key, env) => as(key, "GET", "/flags?name=m", env),
        actedOn: (res) => res.body.data[0].environment,
        flags: (res) => res.body.data,
      },
      {
        name: "POST flag",
        access: "write",
        call: (key, env) => as(key, "POST", `/flags/made-${++serial}`, env, {}),
        actedOn: (res) => res.body.environment,
        flags: (res) => [res.body],
      },
      {
        name: "GET flag",
        access: "read",
        call: (key, env) => as(key, "GET", "/flags/m", env),
        actedOn: (res) => res.body.environment,
        flags: (res) => [res.body],
      },
      {
        name: "PATCH flag",
        access: "write",
        call: (key, env) => as(key, "PATCH", "/flags/m", env, { addActors: [`patched-${++serial}`] }),
        actedOn: async (res) => {
          const actor = `patched-${serial}`;
          const where = await attachedIn(actor);
          assert.equal(where, res.body.environment);
          return where;
        },
        flags: (res) => [res.body],
      },
      {
        name: "DELETE flag",
        access: "write",
        call: async (key, env) => {
          const name = `doomed-${++serial}`;
          assert.equal((await as(ADMIN_KEY, "POST", `/flags/${name}`, undefined, {})).status, 201);
          const res = await as(key, "DELETE", `/flags/${name}`, env);
          // A refused delete deleted nothing; a done one, the flag in every environment.
          const left = await as(ADMIN_KEY, "GET", `/flags/${name}`);
          assert.equal(left.status, res.status === 204 ? 404 : 200, `${name} after ${res.status}`);
          return res;
        },
        // Deleting a flag deletes it in every environment: only keys bound to none may (see below).
        actedOn: () => "every",
      },
      {
        name: "GET check",
        access: "check",
        call: (key, env) => as(key, "GET", "/flags/m/check?actorIds=in-staging", env),
        actedOn: (res) => byAnswer(res.body.enabled),
      },
      {
        name: "GET explain",
        access: "read",
        call: (key, env) => as(key, "GET", "/flags/m/explain?actorIds=in-staging", env),
        actedOn: (res) => byAnswer(res.body.enabled),
      },
      {
        name: "GET flag actors",
        access: "read",
        call: (key, env) => as(key, "GET", "/flags/m/actors?q=in-", env),
        actedOn: (res) => {
          assert.equal(res.body.data.length, 1, res.text);
          return res.body.data[0].actorId.slice(3);
        },
      },
      {
        name: "GET flag segments",
        access: "read",
        call: (key, env) => as(key, "GET", "/flags/m/segments", env),
        actedOn: (res) => {
          assert.equal(res.body.data.length, 1, res.text);
          return res.body.data[0].name;
        },
      },
      {
        name: "GET actor's flags",
        access: "read",
        call: (key, env) => as(key, "GET", "/actors/in-staging/flags", env),
        actedOn: (res) => byAnswer(res.body.data.some((f: any) => f.name === "m")),
        flags: (res) => res.body.data,
      },
      {
        name: "GET segment's flags",
        access: "read",
        call: (key, env) => as(key, "GET", `/segments/${segments.staging}/flags`, env),
        actedOn: (res) => byAnswer(res.body.data.some((f: any) => f.name === "m")),
        flags: (res) => res.body.data,
      },
      {
        name: "GET flag events",
        access: "read",
        call: (key, env) => as(key, "GET", "/flags/m/events?type=flag.updated", env),
        // The events of one environment, or (none named, a key bound to none) of all of them.
        actedOn: (res) => {
          const seen = [...new Set(res.body.data.map((e: any) => e.environment))].sort();
          return seen.length === 1 ? (seen[0] as string) : "every";
        },
      },
    ];

    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      await addEnvironment(server, project, "staging");
      segments = {
        production: await addSegment(server, project, "production", ["member"]),
        staging: await addSegment(server, project, "staging", ["member"]),
      };
      // Flag m answers differently in each: in-staging is on in staging only, in-production in production only.
      await server.request("POST", `${base()}/flags/m`, { body: {} });
      for (const environment of ENVIRONMENTS) {
        await patchFlag(server, project, "m", environment, {
          status: "conditional",
          addActors: [`in-${environment}`],
          addSegments: [segments[environment] as string],
        });
      }
      const key = async (label: string, role: Access, environment: string | null): Promise<Caller> => {
        const made: Key = await bindKey(server, project, role, environment);
        assert.equal(made.environment, environment);
        return { label, key: made.key, rank: RANK[role], environment };
      };
      // Bound keys first: the check below that production is untouched runs after them.
      callers.push(
        await key("write bound to staging", "write", "staging"),
        await key("read bound to staging", "read", "staging"),
        await key("check bound to staging", "check", "staging"),
        await key("write bound to none", "write", null),
        { label: "admin", key: ADMIN_KEY, rank: 4, environment: null },
      );
    });
    after(() => server.close());

    test("every flag route × every key × own, other and no environment", async () => {
      const production = await as(ADMIN_KEY, "GET", "/flags/m");
      const productionTag = production.headers.get("etag");
      const outcomes: string[] = [];
      for (const caller of callers) {
        if (caller.environment === null && caller.label === "write bound to none") {
          // Everything the bound keys did so far left production's configuration of m as it was.
          const now = await as(ADMIN_KEY, "GET", "/flags/m");
          assert.equal(now.headers.get("etag"), productionTag, "no bound key changed production's m");
          const actors = await as(ADMIN_KEY, "GET", "/flags/m/actors", "production");
          assert.deepEqual(
            actors.body.data.map((m: any) => m.actorId),
            ["in-production"],
          );
        }
        for (const route of routes) {
          for (const named of [undefined, "staging", "production"]) {
            const label = `${route.name} by ${caller.label}, environment ${named ?? "(none)"}`;
            const res = await route.call(caller.key, named);
            const refused =
              caller.rank < RANK[route.access] ||
              (caller.environment !== null && named !== undefined && named !== caller.environment) ||
              // Deleting a flag deletes its configuration in every environment: not for a bound key.
              (route.name === "DELETE flag" && caller.environment !== null);
            if (refused) {
              expectProblem(res, 403, "forbidden");
              outcomes.push(`${label}: 403`);
              continue;
            }
            assert.ok(res.status >= 200 && res.status < 300, `${label}: ${res.status} ${res.text}`);
            const wanted =
              route.name === "DELETE flag"
                ? "every"
                : route.name === "GET flag events" && named === undefined && caller.environment === null
                  ? "every"
                  : (named ?? caller.environment ?? "production");
            assert.equal(await route.actedOn(res), wanted, label);
            for (const flag of route.flags?.(res) ?? []) {
              const shown = Object.keys(flag.environments).sort();
              assert.deepEqual(
                shown,
                caller.environment === null ? ["production", "staging"] : [caller.environment],
                `${label}: environments shown`,
              );
              assert.equal(flag.environment, wanted, label);
            }
            outcomes.push(`${label}: ${res.status} in ${wanted}`);
          }
        }
      }
      assert.equal(outcomes.length, callers.length * routes.length * 3);
    });

    test("copy: only keys bound to none may, whatever the direction", async () => {
      for (const caller of callers) {
        for (const [from, to] of [
          ["staging", "production"],
          ["production", "staging"],
        ]) {
          const res = await as(caller.key, "POST", "/flags/m/copy", undefined, { from, to });
          if (caller.environment !== null || caller.rank < RANK.write) {
            expectProblem(res, 403, "forbidden");
            continue;
          }
          assert.equal(res.status, 200, `${caller.label} ${from}→${to}: ${res.text}`);
          assert.equal(res.body.environment, to);
        }
      }
    });

    test("a bound key's answers never carry another environment's configuration", async () => {
      const reader = callers.find((c) => c.label === "read bound to staging") as Caller;
      const texts = [
        (await as(reader.key, "GET", "/flags")).text,
        (await as(reader.key, "GET", "/flags/m")).text,
        (await as(reader.key, "GET", "/actors/member/flags")).text,
        (await as(reader.key, "GET", `/segments/${segments.production}/flags`)).text,
        (await as(reader.key, "GET", "/flags/m/actors")).text,
        (await as(reader.key, "GET", "/flags/m/segments")).text,
      ];
      for (const text of texts) {
        assert.ok(!text.includes('"production"'), `production is not named: ${text.slice(0, 300)}`);
        assert.ok(!text.includes("in-production"), "production's attachments are not shown");
      }
    });
  });

  describe(`role matrix: project-wide routes and keys bound to an environment [${dialect}]`, () => {
    // A key bound to an environment acts in it only, on every route (access/environment-scope.ts, mayReach): it
    // changes or deletes its own environment and revokes its own environment's keys, and nothing that
    // reaches another environment or the whole project. Personal keys make no keys at all.
    let server: TestServer;
    let project: string;
    let serial = 0;
    const unique = (prefix: string) => `${prefix}-${++serial}`;
    const base = () => `/projects/${project}`;

    interface WideCaller {
      readonly label: string;
      readonly options: RequestOptions;
      /** The environment it is bound to; null: none. */
      readonly environment: string | null;
      /** 4 for an admin of the project; below, a service key's role. */
      readonly rank: number;
      /** A person's key (it makes no keys). */
      readonly personal: boolean;
    }
    /** One project-wide operation: its request (targets made fresh as admin), and a look afterwards. */
    interface WideRoute {
      readonly name: string;
      /** What it reaches: an environment, null for the whole project, undefined for no environment's own (a read). */
      readonly reaches: string | null | undefined;
      /** It makes a key: a person's key may not. */
      readonly mints?: boolean;
      readonly success: number;
      call(options: RequestOptions): Promise<ApiResponse>;
      /** Checks (as admin) that the request did what it asked, or, refused, nothing; undoes what would disturb the next. */
      verify?(res: ApiResponse, done: boolean): Promise<void>;
    }
    const callers: WideCaller[] = [];
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await server.request(method, path, body === undefined ? {} : { body });
      assert.ok(res.status < 300, `setup ${method} ${path}: ${res.status} ${res.text}`);
      return res;
    };
    const call = (options: RequestOptions, method: string, path: string, body?: unknown) =>
      server.request(method, `${base()}${path}`, { ...options, ...(body === undefined ? {} : { body }) });
    /** Every item of a paginated list, as admin. */
    const all = async (path: string): Promise<any[]> => {
      const items: any[] = [];
      let after: string | null = null;
      do {
        const page: ApiResponse = await admin(
          "GET",
          `${base()}${path}?limit=100${after === null ? "" : `&after=${after}`}`,
        );
        items.push(...page.body.data);
        after = page.body.pagination.after;
      } while (after !== null);
      return items;
    };
    const environment = async (id: string) => (await server.request("GET", `${base()}/environments/${id}`)).body;
    const keyWorks = async (key: string) => (await server.request("GET", "/whoami", { key })).status === 200;
    const webhook = async () =>
      (await admin("POST", `${base()}/webhooks`, { url: "http://127.0.0.1:9/hook", enabled: false })).body.id as string;

    const routes: WideRoute[] = [
      {
        name: "PATCH its own environment",
        reaches: "staging",
        success: 200,
        call: (o) => call(o, "PATCH", "/environments/staging", { description: unique("own") }),
        verify: async (res, done) =>
          assert.equal((await environment("staging")).description === res.body?.description, done),
      },
      {
        name: "PATCH another environment",
        reaches: "production",
        success: 200,
        call: (o) => call(o, "PATCH", "/environments/production", { description: unique("other") }),
        verify: async (res, done) =>
          assert.equal((await environment("production")).description === res.body?.description, done),
      },
      {
        name: "PATCH another environment's protected",
        reaches: "production",
        success: 200,
        call: (o) => call(o, "PATCH", "/environments/production", { protected: true }),
        verify: async (_, done) => {
          assert.equal((await environment("production")).protected, done);
          await admin("PATCH", `${base()}/environments/production`, { protected: false });
        },
      },
      {
        name: "PATCH its own environment to be the default",
        // The previous default changes too, and every key bound to none follows.
        reaches: null,
        success: 200,
        call: (o) => call(o, "PATCH", "/environments/staging", { default: true }),
        verify: async (_, done) => {
          assert.equal((await environment("staging")).default, done);
          await admin("PATCH", `${base()}/environments/production`, { default: true });
        },
      },
      {
        name: "DELETE another environment",
        reaches: "doomed",
        success: 204,
        call: async (o) => {
          await admin("POST", `${base()}/environments`, { id: "doomed", name: "Doomed" });
          return call(o, "DELETE", "/environments/doomed");
        },
        verify: async (_, done) => {
          const left = await server.request("GET", `${base()}/environments/doomed`);
          assert.equal(left.status, done ? 404 : 200);
          if (!done) await admin("DELETE", `${base()}/environments/doomed`);
        },
      },
      ...[undefined, "staging"].map(
        (copyFrom): WideRoute => ({
          name: `POST an environment${copyFrom === undefined ? "" : " copied from its own"}`,
          reaches: null,
          success: 201,
          call: (o) => call(o, "POST", "/environments", { id: unique("made"), name: "Made", copyFrom }),
          verify: async (_, done) => {
            const made = `made-${serial}`;
            assert.equal((await server.request("GET", `${base()}/environments/${made}`)).status, done ? 200 : 404);
            if (done) await admin("DELETE", `${base()}/environments/${made}`);
          },
        }),
      ),
      ...(
        [
          ["staging", "staging"],
          ["production", "production"],
          [null, null],
          [undefined, "production"],
        ] as const
      ).map(
        ([named, reaches]): WideRoute => ({
          name: `POST a key bound to ${named === undefined ? "(the default)" : (named ?? "none")}`,
          reaches,
          mints: true,
          success: 201,
          call: (o) =>
            call(o, "POST", "/keys", {
              role: "write",
              name: unique("minted"),
              ...(named === undefined ? {} : { environment: named }),
            }),
          verify: async (res, done) => {
            const names = (await all("/keys")).map((k) => k.name);
            assert.equal(names.includes(`minted-${serial}`), done);
            if (done) assert.equal(res.body.environment, reaches);
          },
        }),
      ),
      ...(["staging", "production", null] as const).map((bound): WideRoute => {
        let made: Key | undefined;
        return {
          name: `DELETE a key bound to ${bound ?? "none"}`,
          reaches: bound,
          success: 204,
          call: async (o) => {
            made = await bindKey(server, project, "write", bound);
            return call(o, "DELETE", `/keys/${made.id}`);
          },
          verify: async (_, done) => assert.equal(await keyWorks(made!.key), !done),
        };
      }),
      ...(["staging", "production", null] as const).map((bound): WideRoute => {
        let made: Key | undefined;
        return {
          name: `PATCH (rename) a key bound to ${bound ?? "none"}`,
          reaches: bound,
          success: 200,
          call: async (o) => {
            made = await bindKey(server, project, "write", bound);
            return call(o, "PATCH", `/keys/${made.id}`, { name: unique("renamed") });
          },
          verify: async (_, done) =>
            assert.equal(
              (await all("/keys")).some((k) => k.id === made!.id && k.name === `renamed-${serial}`),
              done,
            ),
        };
      }),
      { name: "GET keys", reaches: undefined, success: 200, call: (o) => call(o, "GET", "/keys") },
      {
        name: "POST a webhook",
        reaches: null,
        success: 201,
        call: (o) => call(o, "POST", "/webhooks", { url: "http://127.0.0.1:9/hook", description: unique("hook") }),
        verify: async (_, done) =>
          assert.equal(
            (await all("/webhooks")).some((h) => h.description === `hook-${serial}`),
            done,
          ),
      },
      { name: "GET webhooks", reaches: null, success: 200, call: (o) => call(o, "GET", "/webhooks") },
      {
        name: "GET a webhook",
        reaches: null,
        success: 200,
        call: async (o) => call(o, "GET", `/webhooks/${await webhook()}`),
      },
      {
        name: "PATCH a webhook",
        reaches: null,
        success: 200,
        call: async (o) => call(o, "PATCH", `/webhooks/${await webhook()}`, { description: unique("changed") }),
        verify: async (_, done) =>
          assert.equal(
            (await all("/webhooks")).some((h) => h.description === `changed-${serial}`),
            done,
          ),
      },
      {
        name: "DELETE a webhook",
        reaches: null,
        success: 204,
        call: async (o) => {
          const id = await webhook();
          const res = await call(o, "DELETE", `/webhooks/${id}`);
          assert.equal(
            (await server.request("GET", `${base()}/webhooks/${id}`)).status,
            res.status === 204 ? 404 : 200,
          );
          return res;
        },
      },
      {
        name: "GET a webhook's deliveries",
        reaches: null,
        success: 200,
        call: async (o) => call(o, "GET", `/webhooks/${await webhook()}/deliveries`),
      },
      {
        name: "POST a webhook's test ping",
        reaches: null,
        success: 202,
        call: async (o) => call(o, "POST", `/webhooks/${await webhook()}/test`),
      },
      { name: "GET access", reaches: undefined, success: 200, call: (o) => call(o, "GET", "/access") },
      ...(["PUT", "DELETE"] as const).map((method): WideRoute => {
        let person = "";
        return {
          name: `${method} access`,
          reaches: null,
          success: method === "PUT" ? 200 : 204,
          call: async (o) => {
            person = (await createPerson(server)).id;
            if (method === "DELETE") await grant(server, project, person, "read");
            return call(o, method, `/access/${person}`, method === "PUT" ? { role: "admin" } : undefined);
          },
          verify: async (_, done) => {
            const granted = (await admin("GET", `${base()}/access`)).body.data.some((g: any) => g.userId === person);
            assert.equal(granted, method === "PUT" ? done : !done);
          },
        };
      }),
    ];

    before(async () => {
      server = await startServer({
        dialect,
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", ENVIRONMENTS_MAX_PER_PROJECT: "100" },
      });
      project = await createProject(server);
      await addEnvironment(server, project, "staging");
      const owner = await createPerson(server);
      await grant(server, project, owner.id, "admin");
      const ownerCookie = await signIn(server, owner.email);
      const boss = await createPerson(server, { role: "admin" });
      const bossCookie = await signIn(server, boss.email);
      const service = async (label: string, role: "write" | "read", bound: string | null): Promise<WideCaller> => ({
        label,
        options: asKey((await bindKey(server, project, role, bound)).key),
        environment: bound,
        rank: RANK[role],
        personal: false,
      });
      const personal = async (label: string, cookie: string, body: Parameters<typeof personalKey>[2]) => ({
        label,
        options: asKey((await personalKey(server, cookie, body)).key),
        environment: body.environment ?? null,
        rank: 4,
        personal: true,
      });
      callers.push(
        { label: "the admin key", options: {}, environment: null, rank: 4, personal: false },
        {
          label: "the project's admin by session",
          options: asSession(ownerCookie),
          environment: null,
          rank: 4,
          personal: false,
        },
        await personal("an admin's personal key of no project", bossCookie, { role: "admin" }),
        await personal("the project admin's key bound to staging", ownerCookie, {
          project,
          environment: "staging",
          role: "admin",
        }),
        await personal("an admin's key bound to staging", bossCookie, {
          project,
          environment: "staging",
          role: "admin",
        }),
        await personal("the project admin's key bound to none", ownerCookie, {
          project,
          environment: null,
          role: "admin",
        }),
        await service("a write key bound to staging", "write", "staging"),
        await service("a read key bound to staging", "read", "staging"),
        await service("a write key bound to none", "write", null),
      );
    });
    after(() => server.close());

    test("every project-wide route × every caller: bound keys reach their own environment only", async () => {
      const wrong: string[] = [];
      const seen = new Set<string>();
      for (const route of routes) {
        for (const caller of callers) {
          const want =
            caller.rank < 4 ||
            (route.mints && caller.personal) ||
            (caller.environment !== null && route.reaches !== undefined && route.reaches !== caller.environment)
              ? "403 forbidden"
              : String(route.success);
          const res = await route.call(caller.options);
          const got = outcome(res);
          seen.add(`${route.name}: ${got}`);
          if (got !== want) wrong.push(`${route.name} by ${caller.label}: ${got} ${res.text}, expected ${want}`);
          await route.verify?.(res, res.status < 300);
        }
      }
      assert.deepEqual(wrong, []);
      // Every route was both refused to someone and allowed to someone.
      for (const route of routes) {
        assert.ok(seen.has(`${route.name}: 403 forbidden`), `${route.name} refused to someone`);
        assert.ok(seen.has(`${route.name}: ${route.success}`), `${route.name} allowed to someone`);
      }
    });

    test("the refusal is the 403 of another environment, saying what was asked", async () => {
      const key = callers.find((c) => c.label === "the project admin's key bound to staging")!.options;
      const other = await call(key, "PATCH", "/environments/production", { description: "x" });
      const named = await call(key, "GET", "/flags?environment=production");
      for (const res of [other, named]) {
        expectProblem(res, 403, "forbidden");
        assert.equal(res.body.detail, 'This key is bound to environment "staging" and may not act on "production".');
      }
      const hook = await call(key, "POST", "/webhooks", { url: "http://127.0.0.1:9/hook" });
      expectProblem(hook, 403, "forbidden");
      assert.match(hook.body.detail, /bound to environment "staging" and may not use the project's webhooks/);
      // A missing environment is refused the same way: a bound key learns nothing of the others.
      expectProblem(await call(key, "DELETE", "/environments/nowhere"), 403, "forbidden");
    });

    test("a bound admin key may delete its own environment, which revokes it with the others bound there", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "qa");
      const owner = await createPerson(server);
      await grant(server, p, owner.id, "admin");
      const cookie = await signIn(server, owner.email);
      const key = await personalKey(server, cookie, { project: p, environment: "qa", role: "admin" });
      const res = await server.request("DELETE", `/projects/${p}/environments/qa`, asKey(key.key));
      assert.equal(res.status, 204, res.text);
      expectProblem(await server.request("GET", "/whoami", asKey(key.key)), 401, "unauthorized");
    });

    test("deleting the project: refused to a key bound to one of its environments", async () => {
      const owner = await createPerson(server);
      const cookie = await signIn(server, owner.email);
      for (const bound of ["production", "staging"]) {
        const p = await createProject(server);
        await addEnvironment(server, p, "staging");
        await grant(server, p, owner.id, "admin");
        const key = await personalKey(server, cookie, { project: p, environment: bound, role: "admin" });
        const res = await server.request("DELETE", `/projects/${p}`, asKey(key.key));
        expectProblem(res, 403, "forbidden");
        assert.equal((await server.request("GET", `/projects/${p}`)).status, 200, "the project is still there");
        assert.equal((await server.request("DELETE", `/projects/${p}`, asSession(cookie))).status, 204);
      }
    });
  });

  describe(`keys carry their environment [${dialect}]`, () => {
    let server: TestServer;
    let project: string;
    before(async () => {
      server = await startServer({ dialect });
      project = await createProject(server);
      await addEnvironment(server, project, "staging");
    });
    after(() => server.close());

    test("create: bound to the named environment, else the default; null for write keys only", async () => {
      const keys = `/projects/${project}/keys`;
      for (const role of ["check", "read", "write"] as const) {
        const byDefault = await server.request("POST", keys, { body: { role, name: `${role} default` } });
        assert.equal(byDefault.status, 201, byDefault.text);
        assert.equal(byDefault.body.environment, "production");
        const named = await server.request("POST", keys, {
          body: { role, name: `${role} staging`, environment: "staging" },
        });
        assert.equal(named.body.environment, "staging");
        expectProblem(
          await server.request("POST", keys, { body: { role, name: "x", environment: "nowhere" } }),
          404,
          "environment_not_found",
        );
        expectProblem(
          await server.request("POST", keys, { body: { role, name: "x", environment: "" } }),
          400,
          "invalid_request",
        );
      }
      for (const role of ["check", "read"] as const) {
        const res = await server.request("POST", keys, { body: { role, name: "x", environment: null } });
        expectProblem(res, 400, "invalid_request");
        assert.deepEqual(
          res.body.errors.map((e: any) => e.path),
          ["/environment"],
        );
      }
      const unbound = await server.request("POST", keys, { body: { role: "write", name: "ci", environment: null } });
      assert.equal(unbound.status, 201, unbound.text);
      assert.equal(unbound.body.environment, null);
      expectProblem(
        await server.request("POST", "/projects/no-such-project/keys", {
          body: { role: "read", name: "x", environment: "staging" },
        }),
        404,
        "project_not_found",
      );
      // The list shows every key's environment; none of the refused ones was made.
      const list = await server.request("GET", `${keys}?limit=100`);
      assert.deepEqual(
        list.body.data.map((k: any) => [k.name, k.environment]),
        [
          ["check default", "production"],
          ["check staging", "staging"],
          ["read default", "production"],
          ["read staging", "staging"],
          ["write default", "production"],
          ["write staging", "staging"],
          ["ci", null],
        ],
      );
      // The history records the binding.
      const [created] = (await server.request("GET", `/projects/${project}/events?type=key.created&limit=1`)).body.data;
      assert.deepEqual(created.after, { id: unbound.body.id, name: "ci", role: "write", environment: null });
    });

    test("/whoami shows the key's environment; admin keys are bound to none", async () => {
      const whoami = async (key: string) => {
        const res = await server.request("GET", "/whoami", { key });
        assert.equal(res.status, 200, res.text);
        return res.body;
      };
      assert.equal((await whoami(ADMIN_KEY)).environment, null);
      for (const environment of ["staging", "production", null]) {
        const key = await bindKey(server, project, "write", environment);
        const me = await whoami(key.key);
        assert.deepEqual(me, {
          keyId: key.id,
          name: `write ${environment ?? "unbound"}`,
          role: "write",
          projectId: project,
          environment,
        });
      }
      const check = await bindKey(server, project, "check", "staging");
      assert.equal((await whoami(check.key)).environment, "staging");
    });

    test("a bound write key deletes flags while its project has one environment (as before environments)", async () => {
      const p = await createProject(server);
      const writer = await bindKey(server, p, "write");
      assert.equal(writer.environment, "production");
      for (const name of ["one", "two"]) await server.request("POST", `/projects/${p}/flags/${name}`, { body: {} });
      assert.equal((await server.request("DELETE", `/projects/${p}/flags/one`, { key: writer.key })).status, 204);
      // A second environment: the delete would take its configuration too.
      await addEnvironment(server, p, "staging");
      const refused = await server.request("DELETE", `/projects/${p}/flags/two`, { key: writer.key });
      expectProblem(refused, 403, "forbidden");
      assert.match(refused.body.detail, /every environment/);
      expectProblem(
        await server.request("DELETE", `/projects/${p}/flags/missing`, { key: writer.key }),
        404,
        "flag_not_found",
      );
      assert.equal((await server.request("DELETE", `/projects/${p}/environments/staging`)).status, 204);
      assert.equal((await server.request("DELETE", `/projects/${p}/flags/two`, { key: writer.key })).status, 204);
    });

    test("a bound key stays bound when the default moves; a key bound to none follows the default", async () => {
      const p = await createProject(server);
      await addEnvironment(server, p, "staging");
      await server.request("POST", `/projects/${p}/flags/f`, { body: {} });
      await patchFlag(server, p, "f", "staging", { status: "enabled" });
      const bound = await bindKey(server, p, "read", "production");
      const unbound = await bindKey(server, p, "write", null);
      const environmentOf = async (key: string) =>
        (await server.request("GET", `/projects/${p}/flags/f`, { key })).body.environment;
      assert.deepEqual(
        [await environmentOf(bound.key), await environmentOf(unbound.key)],
        ["production", "production"],
      );
      assert.equal(
        (await server.request("PATCH", `/projects/${p}/environments/staging`, { body: { default: true } })).status,
        200,
      );
      assert.deepEqual([await environmentOf(bound.key), await environmentOf(unbound.key)], ["production", "staging"]);
      assert.equal((await server.request("GET", "/whoami", { key: bound.key })).body.environment, "production");
      // Its environment deleted, a bound key is revoked; one bound to none lives on.
      assert.equal((await server.request("DELETE", `/projects/${p}/environments/production`)).status, 204);
      expectProblem(await server.request("GET", "/whoami", { key: bound.key }), 401, "unauthorized");
      assert.equal(await environmentOf(unbound.key), "staging");
    });
  });
}
