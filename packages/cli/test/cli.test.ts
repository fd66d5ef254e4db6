import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import {
  BIN,
  type CliResult,
  closedPort,
  expectExit,
  harness,
  runCli,
  silentServer,
  type TestServer,
} from "./harness.js";

const { ADMIN_KEY, DIALECTS, WebhookReceiver, createKey, createProject, startServer, waitFor } = harness;

const SECRET = /fsk_[A-Za-z0-9_-]{43}/;

/** Parses the CLI's stdout as JSON, after asserting it exited 0. */
function json<T = any>(result: CliResult): T {
  expectExit(result, 0);
  return JSON.parse(result.stdout) as T;
}

/** Parses the CLI's stderr as problem details, after asserting the exit code; stdout must be empty. */
function problem(result: CliResult, exitCode: number): any {
  expectExit(result, exitCode);
  assert.equal(result.stdout, "");
  return JSON.parse(result.stderr);
}

for (const dialect of DIALECTS) {
  describe(`flagstaff CLI against a real server (${dialect})`, () => {
    let server: TestServer;
    /** Runs the CLI against the server with the admin key, then `args`. */
    const admin = (...args: string[]) => runCli(["--url", server.url, "--key", ADMIN_KEY, ...args]);

    before(async () => {
      // The webhook test delivers to a receiver on 127.0.0.1, which the server refuses by default.
      server = await startServer({ dialect, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
    });
    after(async () => {
      await server?.close();
    });

    test("a full session: project, key, flag, targeting, segment, checks", async () => {
      expectExit(await admin("projects", "create", "shop", "--name", "Web shop"), 0);
      const created = expectExit(
        await admin("keys", "create", "--project", "shop", "--role", "write", "--name", "ci"),
        0,
      );
      assert.match(created.stdout, /Store this key now/);
      const secret = SECRET.exec(created.stdout)?.[0];
      assert.ok(secret, created.stdout);

      // From here on, as the project's write key.
      const cli = (...args: string[]) => runCli(["--url", server.url, "--key", secret, "--project", "shop", ...args]);
      const check = async (...actors: string[]) => {
        const result = expectExit(await cli("check", "new-checkout", ...actors.flatMap((a) => ["--actor", a])), 0);
        return result.stdout.trim();
      };

      expectExit(await cli("flags", "create", "new-checkout", "--description", "One-page checkout"), 0);
      assert.equal(await check(), "disabled");
      assert.match(expectExit(await cli("flags", "enable", "new-checkout"), 0).stdout, /enabled/);
      assert.equal(await check("anyone"), "enabled");
      expectExit(await cli("flags", "disable", "new-checkout"), 0);
      assert.equal(await check("anyone"), "disabled");

      assert.match(expectExit(await cli("flags", "conditional", "new-checkout"), 0).stdout, /conditional/);
      assert.equal(await check("anyone"), "disabled");
      expectExit(await cli("flags", "set", "new-checkout", "--actors-percent", "100"), 0);
      assert.equal(await check("anyone"), "enabled");
      expectExit(await cli("flags", "set", "new-checkout", "--actors-percent", "0", "--calls-percent", "100"), 0);
      assert.equal(await check(), "enabled");
      expectExit(await cli("flags", "set", "new-checkout", "--calls-percent", "0", "--description", "1-page"), 0);
      assert.equal(await check("anyone"), "disabled");

      expectExit(await cli("flags", "add-actors", "new-checkout", "carol", "dave"), 0);
      const segment = json(
        await cli("segments", "create", "--name", "Beta testers", "--description", "Betas", "--json"),
      );
      assert.match(segment.id, /^seg_/);
      expectExit(await cli("segments", "add-actors", segment.id, "alice", "bob"), 0);
      expectExit(await cli("flags", "add-segments", "new-checkout", segment.id), 0);
      assert.equal(await check("carol"), "enabled", "attached actor");
      assert.equal(await check("dave"), "enabled", "attached actor");
      assert.equal(await check("alice"), "enabled", "segment member");
      assert.equal(await check("eve"), "disabled", "neither");
      assert.equal(await check("eve", "bob"), "enabled", "any of several actors");
      assert.equal(await check(), "disabled", "no actor");
      assert.match(expectExit(await cli("flags", "segments", "new-checkout"), 0).stdout, new RegExp(segment.id));

      expectExit(await cli("flags", "remove-actors", "new-checkout", "carol"), 0);
      assert.equal(await check("carol"), "disabled");
      expectExit(await cli("segments", "remove-actors", segment.id, "alice"), 0);
      assert.equal(await check("alice"), "disabled");
      assert.equal(await check("bob"), "enabled");
      expectExit(await cli("flags", "remove-segments", "new-checkout", segment.id), 0);
      assert.equal(await check("bob"), "disabled");
      assert.match(expectExit(await cli("flags", "segments", "new-checkout"), 0).stdout, /No segments attached/);

      const renamed = json(await cli("segments", "update", segment.id, "--name", "Early adopters", "--json"));
      assert.equal(renamed.name, "Early adopters");
      assert.equal(renamed.description, "Betas");

      // A check key may check, and nothing else.
      const checkKey = SECRET.exec(
        expectExit(await admin("keys", "create", "--project", "shop", "--role", "check", "--name", "app"), 0).stdout,
      )?.[0] as string;
      const app = (...args: string[]) => runCli(["--url", server.url, "--key", checkKey, "--project", "shop", ...args]);
      assert.equal(expectExit(await app("check", "new-checkout", "--actor", "dave"), 0).stdout, "enabled\n");
      expectExit(await app("flags", "list"), 4);

      const keys = json(await admin("keys", "list", "--project", "shop", "--json"));
      assert.deepEqual(
        keys.map((k: any) => [k.name, k.role]),
        [
          ["ci", "write"],
          ["app", "check"],
        ],
      );
      const renamedKey = expectExit(
        await admin("keys", "rename", keys[0].id, "--name", "ci pipeline", "--project", "shop"),
        0,
      ).stdout;
      assert.match(renamedKey, /│ name +│ ci pipeline +│/);
      expectExit(await admin("keys", "rename", keys[0].id, "--project", "shop"), 2, "--name is required");
      expectExit(await admin("keys", "revoke", keys[1].id, "--project", "shop"), 0);
      expectExit(await app("check", "new-checkout"), 4);

      assert.match(expectExit(await cli("segments", "delete", segment.id), 0).stdout, /Deleted segment/);
      expectExit(await cli("segments", "get", segment.id), 3);
      expectExit(await cli("flags", "delete", "new-checkout"), 0);
      expectExit(await cli("flags", "get", "new-checkout"), 3);
      expectExit(await admin("projects", "delete", "shop"), 0);
      expectExit(await admin("projects", "get", "shop"), 3);
      expectExit(await cli("flags", "list"), 4, "deleting a project revokes its keys");
    });

    test("--json prints what the server answers: objects, lists of every page, nothing for a delete", async () => {
      const project = json(await admin("projects", "create", "json-p", "--name", "JSON", "--json"));
      assert.deepEqual(project, (await server.request("GET", "/projects/json-p")).body);
      assert.deepEqual(json(await admin("projects", "get", "json-p", "--json")), project);
      assert.ok(json(await admin("projects", "list", "--json")).some((p: any) => p.id === "json-p"));

      const p = ["--project", "json-p", "--json"];
      const flag = json(await admin("flags", "create", "f1", "--description", "first", ...p));
      assert.equal(flag.status, "disabled");
      const patched = json(await admin("flags", "set", "f1", "--actors-percent", "25", ...p));
      assert.equal(patched.percentageActors, 25);
      assert.deepEqual(
        json(await admin("flags", "get", "f1", ...p)),
        (await server.request("GET", "/projects/json-p/flags/f1")).body,
      );
      assert.deepEqual(json(await admin("check", "f1", ...p)), { enabled: false });
      assert.deepEqual(json(await admin("flags", "enable", "f1", ...p)).status, "enabled");
      assert.deepEqual(json(await admin("check", "f1", "--actor", "x", ...p)), { enabled: true });

      const segment = json(await admin("segments", "create", "--name", "S", ...p));
      const withActors = json(await admin("segments", "add-actors", segment.id, "a1", "a2", ...p));
      assert.deepEqual(
        withActors.latestActors.map((a: any) => a.actorId),
        ["a2", "a1"],
      );
      const served = await server.request("GET", `/projects/json-p/segments/${segment.id}`);
      assert.deepEqual(json(await admin("segments", "get", segment.id, ...p)), served.body);
      assert.deepEqual(json(await admin("segments", "list", ...p)), [served.body]);
      json(await admin("flags", "add-segments", "f1", segment.id, ...p));
      assert.deepEqual(json(await admin("flags", "segments", "f1", ...p)), [served.body]);

      // Lists iterate every page: 105 more flags need two pages of 100.
      for (let i = 0; i < 105; i += 15) {
        await Promise.all(
          Array.from({ length: Math.min(15, 105 - i) }, (_, j) => {
            const name = `pag-${String(i + j).padStart(3, "0")}`;
            return server.request("POST", `/projects/json-p/flags/${name}`, { body: { description: `bulk ${i + j}` } });
          }),
        );
      }
      const all = json(await admin("flags", "list", ...p));
      assert.equal(all.length, 106);
      assert.deepEqual(
        all.map((f: any) => f.name),
        ["f1", ...Array.from({ length: 105 }, (_, i) => `pag-${String(i).padStart(3, "0")}`)],
      );
      assert.equal(json(await admin("flags", "list", "--name", "PAG-00", ...p)).length, 10);
      assert.deepEqual(
        json(await admin("flags", "list", "--q", "bulk 42", ...p)).map((f: any) => f.name),
        ["pag-042"],
      );
      const table = expectExit(await admin("flags", "list", "--project", "json-p"), 0).stdout;
      assert.equal(table.split("\n").filter((line) => line.includes("pag-")).length, 105);

      const deleted = expectExit(await admin("flags", "delete", "f1", ...p), 0);
      assert.equal(deleted.stdout, "");
      expectExit(await admin("projects", "delete", "json-p", "--json"), 0);
    });

    test("tables show the expected cells", async () => {
      expectExit(await admin("projects", "create", "tables", "--name", "Table project"), 0);
      const projects = expectExit(await admin("projects", "list"), 0).stdout;
      assert.match(projects, /│ ID +│ NAME +│ CREATED +│/);
      assert.match(projects, /│ tables +│ Table project +│ \d{4}-\d\d-\d\dT/);
      assert.ok(!projects.includes("\u001b["), "no colour codes when not on a terminal");

      const p = ["--project", "tables"];
      expectExit(await admin("flags", "create", "banner", "--description", "Promo banner", ...p), 0);
      expectExit(await admin("flags", "conditional", "banner", ...p), 0);
      expectExit(await admin("flags", "set", "banner", "--actors-percent", "25", "--calls-percent", "5", ...p), 0);
      const flags = expectExit(await admin("flags", "list", ...p), 0).stdout;
      assert.match(flags, /│ NAME +│ STATUS +│ ACTORS % +│ CALLS % +│ DESCRIPTION +│ LAST CHECKED +│/);
      assert.match(flags, /│ banner +│ conditional +│ 25 +│ 5 +│ Promo banner +│ never +│/);
      const flag = expectExit(await admin("flags", "get", "banner", ...p), 0).stdout;
      assert.match(flag, /│ status +│ conditional +│/);
      assert.match(flag, /│ percentageActors +│ 25 +│/);
      assert.match(flag, /│ description +│ Promo banner +│/);

      const segment = json(await admin("segments", "create", "--name", "VIPs", "--json", ...p));
      expectExit(await admin("segments", "add-actors", segment.id, "ann", "ben", ...p), 0);
      const segments = expectExit(await admin("segments", "list", ...p), 0).stdout;
      assert.match(segments, new RegExp(`│ ${segment.id} +│ VIPs +│ +│ ben, ann +│`));
      assert.match(
        expectExit(await admin("segments", "get", segment.id, ...p), 0).stdout,
        /│ latestActors +│ ben, ann +│/,
      );

      expectExit(await admin("keys", "create", "--role", "read", "--name", "dashboard", ...p), 0);
      assert.match(expectExit(await admin("keys", "list", ...p), 0).stdout, /│ key_\w+ +│ dashboard +│ read +│/);
      assert.match(expectExit(await admin("flags", "list", "--name", "zzz", ...p), 0).stdout, /^No flags\.$/m);
    });

    test("events: the history as a table or JSON, with filters and a limit", async () => {
      expectExit(await admin("projects", "create", "audited", "--name", "Audited"), 0);
      const p = ["--project", "audited"];
      expectExit(await admin("flags", "create", "banner", ...p), 0);
      expectExit(await admin("flags", "enable", "banner", ...p), 0);
      expectExit(await admin("flags", "add-actors", "banner", "ann", ...p), 0);
      expectExit(await admin("flags", "set", "banner", "--description", "Top", "--comment", "For the sale", ...p), 0);
      expectExit(await admin("segments", "create", "--name", "VIPs", ...p), 0);
      const shown = expectExit(await admin("events", ...p), 0).stdout;
      assert.match(
        shown,
        /│ flag\.updated +│ banner +│ production +│ ADMIN_API_KEY +│ description ""→"Top"; comment "For the sale" +│/,
      );
      assert.match(shown, /│ TIME +│ TYPE +│ TARGET +│ ENVIRONMENT +│ BY +│ CHANGES +│/);
      assert.match(shown, /│ flag\.updated +│ banner +│ production +│ ADMIN_API_KEY +│ status "disabled"→"enabled" +│/);
      assert.match(shown, /│ flag\.updated +│ banner +│ production +│ ADMIN_API_KEY +│ addedActors ann +│/);
      assert.match(shown, /│ segment\.created +│ VIPs +│ +│ ADMIN_API_KEY +│/, "project-wide events name none");
      const flagEvents = json(await admin("events", "--flag", "banner", "--type", "flag.", "--json", ...p));
      assert.deepEqual(
        flagEvents.map((e: any) => e.type),
        ["flag.updated", "flag.updated", "flag.updated", "flag.created"],
      );
      const limited = json(await admin("events", "--limit", "2", "--json", ...p));
      assert.deepEqual(
        limited.map((e: any) => e.type),
        ["segment.created", "flag.updated"],
      );
      expectExit(await admin("events", "--type", "flag.renamed", ...p), 6);
      expectExit(await admin("events", "--limit", "0", ...p), 2);

      const segment = json(await admin("segments", "create", "--name", "Staff", "--json", ...p));
      const ofSegment = json(await admin("events", "--segment", segment.id, "--json", ...p));
      assert.deepEqual(
        ofSegment.map((e: any) => [e.type, e.target.id]),
        [["segment.created", segment.id]],
      );
      const all = json(await admin("events", "--json", ...p));
      assert.equal(all.length, 7);
      const oldest = all.at(-1).createdAt;
      assert.deepEqual(
        json(await admin("events", "--since", oldest, "--json", ...p)),
        all,
        "--since includes its time",
      );
      assert.deepEqual(json(await admin("events", "--until", oldest, "--json", ...p)), [], "--until excludes its time");
      const sinceUntil = json(
        await admin("events", "--since", "2000-01-01T00:00:00Z", "--until", "2999-01-01T00:00:00Z", "--json", ...p),
      );
      assert.deepEqual(sinceUntil, all);
      expectExit(await admin("events", "--since", "yesterday", ...p), 6);
    });

    test("webhooks: create, list, get, deliveries, disable and enable, test, update, delete", async () => {
      const receiver = await WebhookReceiver.start();
      expectExit(await admin("projects", "create", "hooked", "--name", "Hooked"), 0);
      const p = ["--project", "hooked"];
      const created = json(
        await admin(
          "webhooks",
          "create",
          `${receiver.url}/cli`,
          "--event",
          "flag.*",
          "--event",
          "webhook.*",
          ...p,
          "--json",
        ),
      );
      assert.match(created.id, /^wh_/);
      assert.match(created.secret, /^whsec_/);
      assert.deepEqual(created.events, ["flag.*", "webhook.*"]);
      assert.equal(created.enabled, true);
      const shown = expectExit(
        await admin("webhooks", "create", `${receiver.url}/other`, "--description", "Chat", "--disabled", ...p),
        0,
      ).stdout;
      assert.match(shown, /│ enabled +│ false +│/);
      assert.match(shown, /Store this signing secret now/);
      assert.match(shown, /^ {2}whsec_\S+$/m);
      const other = /│ id +│ (wh_\w+) +│/.exec(shown)?.[1] as string;
      assert.ok(other, shown);

      const list = expectExit(await admin("webhooks", "list", ...p), 0).stdout;
      assert.match(list, /│ ID +│ URL +│ EVENTS +│ ENABLED +│ DESCRIPTION +│/);
      assert.match(
        list,
        new RegExp(`│ ${created.id} +│ http://127\\.0\\.0\\.1:\\d+/cli +│ flag\\.\\*,webhook\\.\\* +│ yes +│ +│`),
      );
      assert.match(list, new RegExp(`│ ${other} +│ \\S+/other +│ \\* +│ no +│ Chat +│`));
      assert.ok(!list.includes("whsec_"), "lists never show secrets");
      const listed = json(await admin("webhooks", "list", ...p, "--json"));
      assert.deepEqual(
        listed.map((w: any) => w.id),
        [created.id, other],
      );
      assert.match(
        expectExit(await admin("webhooks", "get", created.id, ...p), 0).stdout,
        /│ events +│ flag\.\*, webhook\.\* +│/,
      );

      // A flag change reaches the receiver; so did its own webhook.created, and the other's.
      expectExit(await admin("flags", "create", "banner", ...p), 0);
      const deliveries = await waitFor(
        "three deliveries recorded as succeeded",
        async () => json(await admin("webhooks", "deliveries", created.id, ...p, "--json")),
        { until: (rows: any[]) => rows.length === 3 && rows.every((d) => d.status === "succeeded") },
      );
      assert.deepEqual(
        deliveries.map((d: any) => d.eventType),
        ["flag.created", "webhook.created", "webhook.created"],
      );
      assert.deepEqual(
        receiver
          .at("/cli")
          .map((r) => r.headers["webhook-id"])
          .sort(),
        deliveries.map((d: any) => d.eventId).sort(),
      );
      const table = expectExit(await admin("webhooks", "deliveries", created.id, ...p), 0).stdout;
      assert.match(table, /│ CREATED +│ EVENT +│ TYPE +│ STATUS +│ ATTEMPTS +│ LAST RESULT +│ NEXT ATTEMPT +│/);
      assert.match(table, /│ evt_\w+ +│ flag\.created +│ succeeded +│ 1 +│ HTTP 200 +│ - +│/);
      assert.equal(json(await admin("webhooks", "deliveries", created.id, "--limit", "1", ...p, "--json")).length, 1);
      assert.deepEqual(
        json(await admin("webhooks", "deliveries", created.id, "--status", "failed", ...p, "--json")),
        [],
      );
      assert.match(
        expectExit(await admin("webhooks", "deliveries", other, ...p), 0).stdout,
        /^No deliveries\.$/m,
        "a webhook created off hears nothing",
      );

      // Off: events are not queued for it, not even later. On again: they are.
      assert.equal(json(await admin("webhooks", "disable", created.id, ...p, "--json")).enabled, false);
      expectExit(await admin("flags", "create", "quiet", ...p), 0);
      const on = expectExit(await admin("webhooks", "enable", created.id, ...p), 0).stdout;
      assert.match(on, /│ enabled +│ true +│/);
      expectExit(await admin("flags", "create", "loud", ...p), 0);
      const names = async () =>
        receiver
          .at("/cli")
          .map((r) => JSON.parse(r.body))
          .filter((e) => e.type === "flag.created")
          .map((e) => e.target.name);
      await waitFor("the flag created after enabling", names, { until: (seen) => seen.includes("loud") });
      assert.deepEqual((await names()).sort(), ["banner", "loud"], "nothing was queued while it was off");

      // A ping, to the webhook that is off.
      const pinged = expectExit(await admin("webhooks", "test", other, ...p), 0).stdout;
      assert.match(pinged, /│ eventType +│ ping +│/);
      assert.match(pinged, /│ status +│ pending +│/);
      assert.match(pinged, new RegExp(`flagstaff webhooks deliveries ${other} --limit 1`));
      await waitFor("the ping at the receiver", () => receiver.at("/other"), { until: (r) => r.length === 1 });
      assert.equal(JSON.parse(receiver.at("/other")[0]!.body).type, "ping");

      const moved = json(
        await admin("webhooks", "update", other, "--target", `${receiver.url}/moved`, "--event", "*", ...p, "--json"),
      );
      assert.equal(moved.url, `${receiver.url}/moved`);
      assert.deepEqual(moved.events, ["*"]);
      assert.equal(moved.description, "Chat");
      const refused = expectExit(await admin("webhooks", "update", other, "--target", "ftp://example.com/", ...p), 6);
      assert.match(refused.stderr, /\/url: url must use http or https/);
      expectExit(await admin("webhooks", "create", "http://127.0.0.1:9/", "--event", "flag.renamed", ...p), 6);

      const { key: writeKey } = await createKey(server, "hooked", "write");
      expectExit(await runCli(["--url", server.url, "--key", writeKey, "webhooks", "list", ...p]), 4, "admin only");

      assert.match(expectExit(await admin("webhooks", "delete", other, ...p), 0).stdout, /Deleted webhook/);
      expectExit(await admin("webhooks", "get", other, ...p), 3);
      const gone = problem(await admin("webhooks", "deliveries", other, ...p, "--json"), 3);
      assert.equal(gone.code, "webhook_not_found");
      expectExit(await admin("webhooks", "test", other, ...p), 3);
    });

    test("exit codes: 2 usage, 3 not found, 4 auth, 5 conflict, 6 invalid, 7 unavailable", async () => {
      const projectId = await createProject(server);
      const p = ["--project", projectId];
      await server.request("POST", `/projects/${projectId}/flags/exists`);

      // 2: bad arguments never reach the server.
      expectExit(await admin("flags", "get", ...p), 2);
      expectExit(await admin("flags", "list"), 2);
      assert.match((await admin("flags", "list")).stderr, /FLAGSTAFF_PROJECT/);
      expectExit(await admin("flags", "set", "exists", "--actors-percent", "ten", ...p), 2);
      expectExit(await admin("flags", "frobnicate", ...p), 2);

      // 3: any *_not_found.
      const missingFlag = expectExit(await admin("flags", "get", "nope", ...p), 3);
      assert.match(missingFlag.stderr, /Flag "nope" does not exist/);
      assert.match(missingFlag.stderr, /404 flag_not_found/);
      expectExit(await admin("projects", "get", "no-such-project"), 3);
      expectExit(await admin("segments", "get", "seg_nope", ...p), 3);
      expectExit(await admin("flags", "add-segments", "exists", "seg_nope", ...p), 3);
      expectExit(await admin("keys", "revoke", "key_nope", ...p), 3);
      expectExit(await admin("check", "nope", ...p), 3);

      // 4: no key, a wrong key (401); a key with too low a role or of another project (403).
      expectExit(await runCli(["--url", server.url, "projects", "list"]), 4);
      const wrong = expectExit(await runCli(["--url", server.url, "--key", "fsk_wrong", "flags", "list", ...p]), 4);
      assert.match(wrong.stderr, /401 unauthorized/);
      const { key: readKey } = await createKey(server, projectId, "read");
      const reader = (...args: string[]) => runCli(["--url", server.url, "--key", readKey, ...args]);
      expectExit(await reader("flags", "list", ...p), 0);
      assert.match(expectExit(await reader("flags", "create", "x", ...p), 4).stderr, /403 forbidden/);
      expectExit(await reader("flags", "list", "--project", "another"), 4);

      // 5: conflicts.
      expectExit(await admin("projects", "create", projectId, "--name", "again"), 5);
      expectExit(await admin("flags", "create", "exists", ...p), 5);
      expectExit(await admin("segments", "create", "--name", "dup", ...p), 0);
      expectExit(await admin("segments", "create", "--name", "dup", ...p), 5);

      // 6: the server refuses a value, with the field named.
      const bad = expectExit(await admin("flags", "set", "exists", "--actors-percent", "33", ...p), 6);
      assert.match(bad.stderr, /\/percentageActors: must be one of 0, 1, 2, 5, 10, 25, 50, 75, 100/);
      expectExit(await admin("projects", "create", "my shop!", "--name", "x"), 6);
      expectExit(await admin("keys", "create", "--role", "owner", "--name", "x", ...p), 6);
      expectExit(await admin("flags", "create", "bad name", ...p), 6);
      expectExit(await admin("flags", "get", "..", ...p), 6, "refused by the SDK (invalid_argument)");

      // 7: nothing listens, or nothing answers in time.
      const port = await closedPort();
      const down = expectExit(
        await runCli(["--url", `http://127.0.0.1:${port}`, "--key", ADMIN_KEY, "projects", "list"]),
        7,
      );
      assert.match(down.stderr, /network_error/);
      const silent = await silentServer();
      try {
        const started = Date.now();
        const slow = expectExit(await runCli(["--url", silent.url, "--timeout", "300", "flags", "list", ...p]), 7);
        assert.match(slow.stderr, /timeout/);
        assert.ok(Date.now() - started < 5000);
      } finally {
        await silent.close();
      }
    });

    test("with --json, errors are problem details on stderr", async () => {
      const projectId = await createProject(server);
      const notFound = problem(await admin("flags", "get", "nope", "--project", projectId, "--json"), 3);
      assert.equal(notFound.code, "flag_not_found");
      assert.equal(notFound.status, 404);
      assert.equal(notFound.type, "urn:flagstaff:problem:flag_not_found");
      await server.request("POST", `/projects/${projectId}/flags/f`);
      const invalid = problem(
        await admin("--json", "flags", "set", "f", "--calls-percent", "3", "--project", projectId),
        6,
      );
      assert.equal(invalid.code, "invalid_request");
      assert.deepEqual(invalid.errors, [
        { path: "/percentageCalls", message: "must be one of 0, 1, 2, 5, 10, 25, 50, 75, 100" },
      ]);
      const usage = problem(await admin("flags", "get", "--json"), 2);
      assert.equal(usage.code, "usage");
      const down = problem(
        await runCli(["--url", `http://127.0.0.1:${await closedPort()}`, "projects", "list", "--json"]),
        7,
      );
      assert.equal(down.code, "network_error");
    });

    test("configuration comes from FLAGSTAFF_URL, FLAGSTAFF_API_KEY and FLAGSTAFF_PROJECT; options win", async () => {
      const projectId = await createProject(server);
      const other = await createProject(server);
      await server.request("POST", `/projects/${projectId}/flags/from-env`);
      const env = { FLAGSTAFF_URL: server.url, FLAGSTAFF_API_KEY: ADMIN_KEY, FLAGSTAFF_PROJECT: projectId };
      const listed = json(await runCli(["flags", "list", "--json"], env));
      assert.deepEqual(
        listed.map((f: any) => f.name),
        ["from-env"],
      );
      assert.equal(expectExit(await runCli(["check", "from-env"], env), 0).stdout, "disabled\n");

      // Each option overrides its variable.
      assert.deepEqual(json(await runCli(["flags", "list", "--json", "--project", other], env)), []);
      const badEnv = {
        ...env,
        FLAGSTAFF_API_KEY: "fsk_wrong",
        FLAGSTAFF_URL: `http://127.0.0.1:${await closedPort()}`,
      };
      expectExit(await runCli(["flags", "list"], badEnv), 7);
      expectExit(await runCli(["flags", "list", "--url", server.url], badEnv), 4);
      expectExit(await runCli(["flags", "list", "--url", server.url, "--key", ADMIN_KEY], badEnv), 0);
    });

    if (dialect === DIALECTS[0]) {
      // Every other case runs the CLI in this process; this one proves that the real command wires it up:
      // the bin shim, the process's environment, standard streams and exit code.
      test("the real bin, spawned once: environment, stderr and exit code", async () => {
        const projectId = await createProject(server);
        const env = { PATH: process.env.PATH ?? "", FLAGSTAFF_URL: server.url, FLAGSTAFF_API_KEY: ADMIN_KEY };
        const child = spawn(process.execPath, [BIN, "flags", "get", "missing", "--project", projectId], {
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
        const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
        clearTimeout(timer);
        expectExit({ code, stdout, stderr }, 3);
        assert.equal(stdout, "");
        assert.match(stderr, /Flag "missing" does not exist\. \(404 flag_not_found\)/);
      });
    }
  });
}
