// Flags as code through the CLI (issue 37; docs/flags-as-code.md), against a real server on a real
// database: `flagstaff export` writes the project's document as YAML or JSON by the file's extension, or
// prints it; what it writes is the API's document, to the byte for JSON; refusals are printed.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parse } from "yaml";
import { expectExit, harness, runCli, type TestServer } from "./harness.js";

const { ADMIN_KEY, DIALECTS, startServer } = harness;

for (const dialect of DIALECTS) {
  describe(`flagstaff export (${dialect})`, () => {
    let server: TestServer;
    let dir: string;
    const cli = (...args: string[]) =>
      runCli(["--url", server.url, "--key", ADMIN_KEY, "--project", "cli-export", ...args], {});

    before(async () => {
      server = await startServer({ dialect });
      dir = mkdtempSync(join(tmpdir(), "flagstaff-export-"));
      const api = (method: string, path: string, body?: unknown) => server.request(method, path, { body });
      assert.equal((await api("POST", "/projects", { id: "cli-export", name: "Export" })).status, 201);
      const segment = (await api("POST", "/projects/cli-export/segments", { name: "beta" })).body;
      await api("PATCH", `/projects/cli-export/segments/${segment.id}`, { addActors: ["ann"] });
      await api("POST", "/projects/cli-export/flags/banner", { kind: "experiment" });
      await api("PATCH", "/projects/cli-export/flags/banner", { status: "conditional", addSegments: [segment.id] });
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await server.close();
    });

    test("to a .yaml file and to a .json file: the API's document, with the members when asked", async () => {
      const api = await server.request("GET", "/projects/cli-export/export?members=true");
      const yamlFile = join(dir, "flags.yaml");
      const wrote = expectExit(await cli("export", "-o", yamlFile, "--members"), 0).stdout;
      assert.match(
        wrote,
        /Wrote project cli-export \(1 flags, 1 segments, 1 environments\) to .*flags\.yaml at revision "r\d+"\./,
      );
      assert.deepEqual(parse(readFileSync(yamlFile, "utf8")), api.body);
      const jsonFile = join(dir, "flags.json");
      expectExit(await cli("export", "--output", jsonFile, "--members"), 0);
      assert.equal(readFileSync(jsonFile, "utf8"), `${JSON.stringify(api.body, null, 2)}\n`);
      // Without --members, no members.
      expectExit(await cli("export", "-o", jsonFile), 0);
      assert.equal("members" in JSON.parse(readFileSync(jsonFile, "utf8")).segments[0], false);
    });

    test("printed: YAML, or JSON with --json", async () => {
      const api = (await server.request("GET", "/projects/cli-export/export")).body;
      assert.deepEqual(parse(expectExit(await cli("export"), 0).stdout), api);
      assert.deepEqual(JSON.parse(expectExit(await cli("export", "--json"), 0).stdout), api);
    });

    test("refusals: a file of another kind, no project, an unknown project, a check key", async () => {
      assert.match(expectExit(await cli("export", "-o", join(dir, "flags.txt")), 2).stderr, /\.yaml, \.yml or \.json/);
      assert.match(
        expectExit(await runCli(["--url", server.url, "--key", ADMIN_KEY, "export"], {}), 2).stderr,
        /project/i,
      );
      const missing = await runCli(["--url", server.url, "--key", ADMIN_KEY, "--project", "nope", "export"], {});
      assert.match(expectExit(missing, 3).stderr, /does not exist/);
      const key = (await server.request("POST", "/projects/cli-export/keys", { body: { role: "check", name: "c" } }))
        .body.key;
      const refused = await runCli(["--url", server.url, "--key", key, "--project", "cli-export", "export"], {});
      expectExit(refused, 4);
    });
  });
}
