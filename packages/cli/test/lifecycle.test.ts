// Usage and lifecycle through the CLI (issue 36), against a real server on a real database: a flag's kind
// and permanence at creation and with `flags set`, `flags list --stale/--archived/--kind`, `flags archive`
// and `flags restore`, and `flags usage` printing evaluations per variant; every refusal printed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { expectExit, harness, runCli, type TestServer } from "./harness.js";

const { ADMIN_KEY, DIALECTS, startServer } = harness;

for (const dialect of DIALECTS) {
  describe(`flagstaff flags: usage and lifecycle (${dialect})`, () => {
    let server: TestServer;
    const cli = (...args: string[]) =>
      runCli(["--url", server.url, "--key", ADMIN_KEY, "--project", "cli-life", ...args], {});

    before(async () => {
      server = await startServer({ dialect });
      expectExit(
        await runCli(["--url", server.url, "--key", ADMIN_KEY, "projects", "create", "cli-life", "--name", "Life"], {}),
        0,
      );
    });
    after(() => server.close());

    test("kind and permanent at creation and with set; list by kind and staleness", async () => {
      const created = JSON.parse(
        expectExit(await cli("flags", "create", "kill", "--kind", "kill-switch", "--permanent", "--json"), 0).stdout,
      );
      assert.deepEqual([created.kind, created.permanent], ["kill-switch", true]);
      expectExit(await cli("flags", "create", "launch"), 0);
      const set = JSON.parse(
        expectExit(await cli("flags", "set", "launch", "--kind", "experiment", "--json"), 0).stdout,
      );
      assert.equal(set.kind, "experiment");
      const shown = expectExit(await cli("flags", "get", "launch"), 0).stdout;
      assert.match(shown, /kind[│\s]+experiment/);
      assert.match(shown, /stale[│\s]+no/);
      const kills = JSON.parse(expectExit(await cli("flags", "list", "--kind", "kill-switch", "--json"), 0).stdout);
      assert.deepEqual(
        kills.map((f: { name: string }) => f.name),
        ["kill"],
      );
      const stale = expectExit(await cli("flags", "list", "--stale"), 0).stdout;
      assert.match(stale, /No flags\./);
      const bad = expectExit(await cli("flags", "set", "launch", "--kind", "forever"), 6);
      assert.match(bad.stderr, /kind/);
    });

    test("archive and restore; the list leaves archived flags out", async () => {
      expectExit(await cli("flags", "create", "old"), 0);
      assert.match(expectExit(await cli("flags", "archive", "old"), 0).stdout, /Archived flag old\./);
      const listed = expectExit(await cli("flags", "list"), 0).stdout;
      assert.doesNotMatch(listed, /│ old /);
      assert.match(expectExit(await cli("flags", "list", "--archived"), 0).stdout, /│ old /);
      const again = expectExit(await cli("flags", "archive", "old"), 5);
      assert.match(again.stderr, /archived already/);
      assert.match(expectExit(await cli("flags", "restore", "old"), 0).stdout, /Restored flag old\./);
      assert.match(expectExit(await cli("flags", "list"), 0).stdout, /│ old /);
      const missing = expectExit(await cli("flags", "archive", "nope"), 3);
      assert.match(missing.stderr, /does not exist/);
    });

    test("usage: evaluations per variant and bucket, and their totals", async () => {
      expectExit(await cli("flags", "create", "counted"), 0);
      expectExit(await cli("flags", "enable", "counted"), 0);
      for (let i = 0; i < 3; i++) expectExit(await cli("check", "counted"), 0);
      await server.service.usage.flush();
      const printed = expectExit(await cli("flags", "usage", "counted", "--step", "minute"), 0).stdout;
      assert.match(printed, /MINUTE[│\s]+ON/);
      assert.match(printed, /In production, .*: on 3\./);
      const series = JSON.parse(
        expectExit(await cli("flags", "usage", "counted", "--step", "day", "--json"), 0).stdout,
      );
      assert.deepEqual(series.totals, { on: 3 });
      const refused = expectExit(await cli("flags", "usage", "counted", "--step", "week"), 6);
      assert.match(refused.stderr, /step/);
      assert.match(expectExit(await cli("flags", "usage", "quiet-one"), 3).stderr, /does not exist/);
    });
  });
}
