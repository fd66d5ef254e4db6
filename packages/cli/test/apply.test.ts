// Flags as code through the CLI (issue 37; docs/flags-as-code.md), against a real server on a real
// database: `flagstaff diff -f` prints the plan and exits 2 when there is one (0 when not), changing
// nothing; `flagstaff apply -f` makes it (--dry-run, --prune, --if-match), and prints the link of the
// change request an environment that requires approvals gets; every refusal.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parse, stringify } from "yaml";
import { expectExit, harness, runCli, type TestServer } from "./harness.js";

const { ADMIN_KEY, DIALECTS, startServer } = harness;

type Doc = Record<string, any>;

for (const dialect of DIALECTS) {
  describe(`flagstaff diff and apply (${dialect})`, () => {
    let server: TestServer;
    let dir: string;
    const project = "cli-apply";
    const cli = (...args: string[]) =>
      runCli(["--url", server.url, "--key", ADMIN_KEY, "--project", project, ...args], {});
    const exported = async () => {
      const res = await server.request("GET", `/projects/${project}/export`);
      return { doc: res.body as Doc, etag: res.headers.get("etag") as string };
    };
    const file = (name: string, doc: Doc, format: "yaml" | "json" = "yaml") => {
      const path = join(dir, name);
      writeFileSync(path, format === "yaml" ? stringify(doc) : JSON.stringify(doc));
      return path;
    };

    before(async () => {
      server = await startServer({ dialect });
      dir = mkdtempSync(join(tmpdir(), "flagstaff-apply-"));
      const api = (method: string, path: string, body?: unknown) => server.request(method, path, { body });
      assert.equal((await api("POST", "/projects", { id: project, name: "Apply" })).status, 201);
      assert.equal(
        (await api("POST", `/projects/${project}/environments`, { id: "staging", name: "Staging" })).status,
        201,
      );
      await api("POST", `/projects/${project}/flags/banner`, { description: "A banner" });
      await api("POST", `/projects/${project}/flags/legacy`, {});
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await server.close();
    });

    test("an export diffs as nothing to do (exit 0), in YAML and JSON", async () => {
      const yamlFile = join(dir, "flags.yaml");
      expectExit(await cli("export", "-o", yamlFile), 0);
      const same = expectExit(await cli("diff", "-f", yamlFile), 0).stdout;
      assert.match(same, /^No changes: project cli-apply is as the document says \(revision r\d+\)\./);
      const jsonFile = join(dir, "flags.json");
      expectExit(await cli("export", "-o", jsonFile), 0);
      expectExit(await cli("diff", "--file", jsonFile), 0);
      assert.deepEqual(JSON.parse(expectExit(await cli("diff", "-f", jsonFile, "--json"), 0).stdout).changes, []);
    });

    test("diff prints a readable plan and exits 2; apply makes it; diff is then 0", async () => {
      const { doc, etag } = await exported();
      const next = structuredClone(doc);
      next.flags[0].description = "The banner";
      next.flags[0].environments.staging.status = "enabled";
      next.flags[0].environments.staging.actors = ["ann", "bob"];
      next.flags.push({ ...structuredClone(next.flags[1]), name: "new-flag", kind: "operational", description: "" });
      next.flags.sort((a: Doc, b: Doc) => (a.name < b.name ? -1 : 1));
      next.flags = next.flags.filter((f: Doc) => f.name !== "legacy");
      const path = file("next.yaml", next);

      const diff = expectExit(await cli("diff", "-f", path), 2).stdout;
      assert.equal(
        diff,
        [
          `Plan for project cli-apply at revision ${etag.replaceAll('"', "")}:`,
          "  ~ update flag banner",
          '      description: "A banner" → "The banner"',
          "  + create flag new-flag",
          '      type: "boolean"',
          '      kind: "operational"',
          "  ~ update flag banner in staging",
          '      status: "disabled" → "enabled"',
          "      actors: +ann +bob",
          "1 to create, 2 to update, 0 to delete.",
          "",
        ].join("\n"),
      );
      // With --prune, legacy's deletion too.
      assert.match(expectExit(await cli("diff", "-f", path, "--prune"), 2).stdout, /- delete flag legacy/);
      assert.equal((await exported()).etag, etag, "diff changes nothing");
      // apply --dry-run prints the plan, changes nothing, exits 0.
      const dry = expectExit(await cli("apply", "-f", path, "--dry-run"), 0).stdout;
      assert.match(dry, /Dry run: nothing was changed\./);
      assert.equal((await exported()).etag, etag);

      const applied = expectExit(await cli("apply", "-f", path, "--if-match", etag.replaceAll('"', "")), 0).stdout;
      assert.match(applied, /Applied: project cli-apply is at revision r\d+\./);
      const after = (await exported()).doc;
      assert.deepEqual(
        after.flags.map((f: Doc) => f.name),
        ["banner", "legacy", "new-flag"],
      );
      assert.equal(after.flags[0].environments.staging.status, "enabled");
      expectExit(await cli("diff", "-f", path), 0);
      // The same file with --prune deletes legacy.
      expectExit(await cli("apply", "-f", path, "--prune"), 0);
      assert.deepEqual(
        (await exported()).doc.flags.map((f: Doc) => f.name),
        ["banner", "new-flag"],
      );
      assert.equal(expectExit(await cli("diff", "-f", path, "--prune"), 0).stdout.startsWith("No changes"), true);
    });

    test("an environment that requires approvals: apply prints the change request's link", async () => {
      await server.request("PATCH", `/projects/${project}/environments/staging`, { body: { requiredApprovals: 1 } });
      const { doc } = await exported();
      doc.flags[0].environments.staging.status = "disabled";
      const path = file("approval.json", doc, "json");
      const out = expectExit(await cli("apply", "-f", path), 0).stdout;
      assert.match(out, /~ update flag banner in staging \(by change request: approvals required\)/);
      const link = /Change request (\S+) opened for staging \(its changes wait for approval\): (\S+)$/m.exec(out);
      assert.ok(link, out);
      assert.equal(link[2], `${server.url.replace(/\/+$/, "")}/console/p/cli-apply/changes/${link[1]}`);
      const request = await server.request("GET", `/projects/${project}/change-requests/${link[1]}`);
      assert.equal(request.status, 200);
      assert.equal((await exported()).doc.flags[0].environments.staging.status, "enabled");
      await server.request("PATCH", `/projects/${project}/environments/staging`, { body: { requiredApprovals: 0 } });
    });

    test("refusals: no file, an unreadable or non-document file, a stale revision, an invalid document", async () => {
      assert.match(expectExit(await cli("diff"), 2).stderr, /--file is required/);
      assert.match(expectExit(await cli("apply", "-f", join(dir, "missing.yaml")), 2).stderr, /cannot read/);
      writeFileSync(join(dir, "bad.yaml"), "flags: [unclosed");
      assert.match(expectExit(await cli("diff", "-f", join(dir, "bad.yaml")), 2).stderr, /not YAML or JSON/);
      writeFileSync(join(dir, "list.yaml"), "- a\n- b\n");
      assert.match(expectExit(await cli("diff", "-f", join(dir, "list.yaml")), 2).stderr, /project's document/);
      const { doc, etag } = await exported();
      await server.request("PATCH", `/projects/${project}/flags/banner`, { body: { description: "moved" } });
      const path = file("stale.yaml", doc);
      const stale = expectExit(await cli("apply", "-f", path, "--if-match", etag), 5);
      assert.match(stale.stderr, /changed since you read it/);
      assert.equal((await exported()).doc.flags[0].description, "moved");
      const wrong = structuredClone(doc);
      wrong.project.id = "other";
      assert.match(expectExit(await cli("apply", "-f", file("other.yaml", wrong)), 6).stderr, /another project/);
      const read = (await server.request("POST", `/projects/${project}/keys`, { body: { role: "read", name: "r" } }))
        .body.key;
      const refused = await runCli(["--url", server.url, "--key", read, "--project", project, "diff", "-f", path], {});
      expectExit(refused, 4);
      assert.equal(parse(readFileSync(path, "utf8")).project.id, project);
    });
  });
}
