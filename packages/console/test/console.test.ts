// The web console end to end: Chromium signs in with real keys against a real server in this process, does
// what a person would, and every change is then checked through the API itself, not only on the screen.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  createKey,
  createProject,
  DIALECTS,
  startServer,
  type TestServer,
  WebhookReceiver,
  waitFor,
} from "@flagstaff/test-harness";
import type { Browser, Page } from "playwright-core";
import {
  axeViolations,
  browserSkip,
  closeBrowser,
  flagTab,
  launchChromium,
  openTab,
  saveFlagChanges,
  screenshot,
  showKeyForm,
  signIn,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 90_000 };

describe(`the web console in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let project: string;
  const keys: Record<"write" | "read" | "check", string> = { write: "", read: "", check: "" };

  before(
    async () => {
      receiver = await WebhookReceiver.start();
      server = await startServer({ dialect, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" } });
      project = await createProject(server, "shop");
      for (const role of ["write", "read", "check"] as const) keys[role] = (await createKey(server, project, role)).key;
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );
  after(
    async () => {
      await closeBrowser(browser);
      await Promise.allSettled([server?.close(), receiver?.close()]);
    },
    { timeout: 30_000 },
  );

  const api = <T = any>(method: string, path: string, body?: unknown, key?: string) =>
    server.request<T>(method, path, { ...(body === undefined ? {} : { body }), ...(key === undefined ? {} : { key }) });
  const url = () => server.url;

  async function withTab(fn: (page: Page, problems: string[]) => Promise<void>, scheme: "light" | "dark" = "light") {
    const tab = await openTab(browser, scheme);
    try {
      await fn(tab.page, tab.problems);
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  }

  test("serving: / redirects to /console/, app routes fall back to index.html, assets are immutable", async () => {
    const root = await fetch(`${url()}/`, { redirect: "manual" });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get("location"), "/console/");
    const deep = await fetch(`${url()}/console/p/shop/flags/anything`);
    assert.equal(deep.status, 200);
    assert.equal(deep.headers.get("cache-control"), "no-cache");
    assert.match(deep.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    assert.equal(deep.headers.get("x-content-type-options"), "nosniff");
    const html = await deep.text();
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(asset, "index.html loads a hashed script");
    const script = await fetch(`${url()}${asset}`);
    assert.equal(script.status, 200);
    assert.equal(script.headers.get("cache-control"), "public, max-age=31536000, immutable");
    assert.match(script.headers.get("content-type") ?? "", /javascript/);
    assert.equal((await fetch(`${url()}/console/assets/missing.js`)).status, 404);
    assert.doesNotMatch(html, /https?:\/\//, "nothing is loaded from another origin");
  });

  test(
    "sign-in and roles: admin, write, read (read-only, with the reason), check refused; 401 signs out",
    T,
    async () => {
      await withTab(async (page) => {
        // A check key is refused with a clear message; so is an unknown key.
        await page.goto(`${url()}/console/`);
        assert.equal(await page.getByLabel("Project", { exact: true }).count(), 0, "no project field: whoami names it");
        await showKeyForm(page);
        await page.getByLabel("API key").fill(keys.check);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByText("This is a check key").waitFor();
        await page.getByLabel("API key").fill("fsk_not-a-key-at-all-000000000000000");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByText("This key is not valid").waitFor();

        // read: sees flags, every control disabled with the reason.
        await api("POST", `/projects/${project}/flags/roles-flag`, {});
        await signIn(page, url(), keys.read);
        // The header says what GET /whoami says of the key, and the key's own project opened.
        const me = (await api("GET", "/whoami", undefined, keys.read)).body;
        assert.equal(me.role, "read");
        assert.equal(me.projectId, project);
        assert.match(await page.getByTestId("signed-in").innerText(), /role read/);
        assert.match(await page.getByTestId("signed-in").innerText(), new RegExp(me.name));
        await page.waitForURL(`**/console/p/${project}/flags`);
        assert.equal(await page.evaluate(() => localStorage.length), 0, "nothing in localStorage");
        assert.ok(await page.evaluate(() => Object.keys(sessionStorage).length === 1), "the key is in sessionStorage");
        assert.doesNotMatch(page.url(), /fsk_/, "the key is not in the URL");
        assert.equal(await page.getByRole("button", { name: "New flag" }).isDisabled(), true);
        await page.getByText("Read-only: this key has the read role").first().waitFor();
        await page.getByRole("link", { name: "roles-flag" }).click();
        const status = page.getByRole("radiogroup", { name: "Status" });
        await status.waitFor();
        assert.equal(await status.getByRole("radio", { name: /Enabled/ }).isDisabled(), true);
        assert.equal(await page.getByLabel("Add actors").isDisabled(), true);
        // A read key may still explain (GET …/explain is role read).
        await flagTab(page, "Evaluate");
        await page.getByLabel("Actor ids").fill("someone");
        await page.getByRole("button", { name: "Evaluate" }).click();
        await page.getByTestId("why").getByText("Rule: status. The flag is disabled").waitFor();
        assert.equal(await page.getByRole("link", { name: "Keys" }).count(), 0, "no keys page for read");
        await page.getByRole("link", { name: "Segments" }).click();
        assert.equal(await page.getByRole("button", { name: "New segment" }).isDisabled(), true);
        await page.getByRole("button", { name: "Sign out" }).click();

        // write: may edit; no projects, keys or webhooks.
        await signIn(page, url(), keys.write);
        assert.match(await page.getByTestId("signed-in").innerText(), /role write/);
        await page.waitForURL(`**/console/p/${project}/flags`);
        assert.equal(await page.getByRole("button", { name: "New flag" }).isDisabled(), false);
        assert.equal(await page.getByRole("link", { name: "Projects" }).count(), 0);
        assert.equal(await page.getByRole("link", { name: "Webhooks" }).count(), 0);
        await page.getByRole("button", { name: "Sign out" }).click();

        // admin: every project, keys and webhooks.
        await signIn(page, url(), server.config.adminApiKey!);
        assert.match(await page.getByTestId("signed-in").innerText(), /role admin/);
        await page.waitForURL("**/console/projects");
        await page.getByRole("link", { name: "shop", exact: true }).click();
        await page.getByRole("link", { name: "Keys" }).waitFor();
        await page.getByRole("link", { name: "Webhooks" }).waitFor();
        await page.getByRole("button", { name: "Sign out" }).click();

        // A key revoked meanwhile: the next poll gets 401 and the console signs out, saying why.
        const doomed = await createKey(server, project, "write");
        await signIn(page, url(), doomed.key);
        assert.equal((await api("DELETE", `/projects/${project}/keys/${doomed.id}`)).status, 204);
        await page.getByText("You were signed out").waitFor();
        await page.getByLabel("API key").waitFor();
        assert.equal(await page.evaluate(() => sessionStorage.length), 0, "the key is forgotten");
      });
    },
  );

  test("projects (admin): create, and delete with the typed name", T, async () => {
    await withTab(async (page) => {
      await signIn(page, url(), server.config.adminApiKey!);
      await page.getByLabel("Project id").fill("made-in-console");
      await page.getByLabel("Project name").fill("Made in the console");
      await page.getByRole("button", { name: "Create project" }).click();
      await page.getByRole("link", { name: "made-in-console" }).waitFor();
      assert.equal((await api("GET", "/projects/made-in-console")).status, 200);
      // A duplicate shows the API's problem detail next to the form.
      await page.getByLabel("Project id").fill("made-in-console");
      await page.getByLabel("Project name").fill("Again");
      await page.getByRole("button", { name: "Create project" }).click();
      await page.getByRole("alert").filter({ hasText: /exist/i }).waitFor();

      await page.getByRole("button", { name: "Delete project made-in-console" }).click();
      const dialog = page.getByRole("dialog");
      const confirm = dialog.getByRole("button", { name: "Delete project" });
      assert.equal(await confirm.isDisabled(), true, "disabled until the name is typed");
      await dialog.getByLabel(/Type made-in-console to confirm/).fill("made-in-console");
      await confirm.click();
      await waitFor(
        "the project is deleted",
        async () => (await api("GET", "/projects/made-in-console")).status === 404,
      );
      await page.getByRole("link", { name: "made-in-console" }).waitFor({ state: "detached" });
    });
  });

  test("flags list: New flag, search by name and by description, paging, live updates", T, async () => {
    for (let i = 0; i < 24; i++) {
      await api("POST", `/projects/${project}/flags/bulk-${String(i).padStart(2, "0")}`, {
        description: i === 7 ? "needle here" : "",
      });
    }
    await withTab(async (page) => {
      await signIn(page, url(), keys.write);
      await page.getByRole("button", { name: "New flag" }).click();
      await page.getByLabel("Name", { exact: true }).fill("checkout-v2");
      await page.getByLabel("Description", { exact: true }).fill("One-page checkout");
      await page.getByRole("button", { name: "Create flag" }).click();
      await page.getByRole("heading", { name: "checkout-v2", level: 1 }).waitFor();
      const created = await api("GET", `/projects/${project}/flags/checkout-v2`);
      assert.equal(created.status, 200);
      assert.equal(created.body.description, "One-page checkout");

      await page.getByRole("link", { name: "Flags", exact: true }).first().click();
      const table = page.getByRole("table", { name: "Flags" });
      await table.waitFor();
      assert.equal(await table.getByRole("row").count(), 21, "a header and 20 flags");
      await page.getByRole("button", { name: "Next →" }).click();
      await table.getByRole("link", { name: "checkout-v2" }).waitFor();
      await page.getByRole("button", { name: "← Previous" }).click();
      await table.getByRole("link", { name: "bulk-00" }).waitFor();

      await page.getByLabel("Search flags").fill("bulk-1");
      await waitFor("ten matches", async () => (await table.getByRole("row").count()) === 11);
      await page.getByLabel("Search flags").fill("needle");
      await page.getByText("No flag matches.").waitFor();
      await page.getByLabel("Search in").selectOption("q");
      await table.getByRole("link", { name: "bulk-07" }).waitFor();
      await page.getByText("never").first().waitFor();

      // The counts come from the flags' actorsCount and segmentsCount.
      await api("PATCH", `/projects/${project}/flags/bulk-07`, { addActors: ["a1", "a2"] });
      const row = table.getByRole("row").filter({ has: page.getByRole("link", { name: "bulk-07" }) });
      await row.getByText("2 actors, 0 segments").waitFor({ timeout: 15_000 });
      assert.equal((await api("GET", `/projects/${project}/flags/bulk-07`)).body.actorsCount, 2);

      // Made elsewhere, it appears without a reload.
      await page.getByLabel("Search flags").fill("zz-");
      await page.getByLabel("Search in").selectOption("name");
      await api("POST", `/projects/${project}/flags/zz-from-curl`, {});
      await table.getByRole("link", { name: "zz-from-curl" }).waitFor({ timeout: 15_000 });
      await screenshot(page, "flags-light.png");
    });
  });

  test(
    "flag page: status with confirmation, percentages, actors pasted and removed, segments, evaluate, history, snippets",
    T,
    async () => {
      const flag = "flag-page";
      await api("POST", `/projects/${project}/flags/${flag}`, { description: "The flag page" });
      const segment = (await api("POST", `/projects/${project}/segments`, { name: "Beta testers" })).body;
      const pasted = Array.from({ length: 300 }, (_, i) => `user-${i}`);
      await withTab(async (page) => {
        await signIn(page, url(), keys.write);
        await page.goto(`${url()}/console/p/${project}/flags/${flag}`);
        const status = page.getByRole("radiogroup", { name: "Status" });
        await status.getByRole("radio", { name: /Conditional/ }).click();
        await page.getByTestId("status-pending").getByText("changes the answer for every caller").waitFor();
        await saveFlagChanges(page);
        await waitFor(
          "conditional",
          async () => (await api("GET", `/projects/${project}/flags/${flag}`)).body.status === "conditional",
        );
        // The page shows it once its own answer is in, which may come after the API already has it.
        await waitFor("the Conditional radio checked", () =>
          status.getByRole("radio", { name: /Conditional/ }).isChecked(),
        );

        const options = await page.getByLabel("Percentage of actors").locator("option").allInnerTexts();
        assert.deepEqual(options, ["0%", "1%", "2%", "5%", "10%", "25%", "50%", "75%", "100%"]);
        await page.getByLabel("Percentage of actors").selectOption("25");
        await page.getByLabel("Percentage of calls").selectOption("5");
        await saveFlagChanges(page);
        await waitFor("percentages saved", async () => {
          const f = (await api("GET", `/projects/${project}/flags/${flag}`)).body;
          return f.percentageActors === 25 && f.percentageCalls === 5;
        });

        await page.getByLabel("Add actors").fill(pasted.join("\n"));
        await page.getByRole("button", { name: "Add", exact: true }).click();
        await page.getByText("Added 300 actors.").waitFor();
        assert.equal(
          (await api("GET", `/projects/${project}/flags/${flag}`)).body.actorsCount,
          300,
          "all 300 attached",
        );
        await page.getByTestId("attached-counts").getByText("300 actors, 0 segments").waitFor();

        // The attached actors: GET …/flags/{flag}/actors, 50 a page, by actor id (bytewise), searchable.
        const list = page.getByRole("table", { name: "Attached actors" });
        await list.waitFor();
        const sorted = [...pasted].sort();
        await list.getByRole("link", { name: sorted[0], exact: true }).waitFor();
        assert.equal(await list.getByRole("row").count(), 51, "a header and 50 actors");
        const pager = page.getByRole("navigation", { name: "Attached actors pages" });
        await pager.getByRole("button", { name: "Next →" }).click();
        await list.getByRole("link", { name: sorted[50], exact: true }).waitFor();
        const second = (await api("GET", `/projects/${project}/flags/${flag}/actors?limit=50&q=user`)).body;
        assert.equal(second.data[49].actorId, sorted[49], "the API's first page ends where the console's does");
        await pager.getByRole("button", { name: "← Previous" }).click();
        await list.getByRole("link", { name: sorted[0], exact: true }).waitFor();
        await page.getByLabel("Search actors").fill("user-299");
        await waitFor("one match", async () => (await list.getByRole("row").count()) === 2);
        await list.getByRole("button", { name: "Remove user-299" }).click();
        await page.getByText("No actor matches.").waitFor();
        await waitFor("removed", async () => {
          const found = (await api("GET", `/projects/${project}/flags/${flag}/actors?q=user-299`)).body.data;
          return found.length === 0;
        });
        assert.equal((await api("GET", `/projects/${project}/flags/${flag}`)).body.actorsCount, 299);
        await page.getByTestId("attached-counts").getByText("299 actors, 0 segments").waitFor();
        await page.getByLabel("Search actors").fill("");

        await api("PATCH", `/projects/${project}/segments/${segment.id}`, { addActors: ["vip-1"] });
        await page.getByLabel("Segment name").fill("Beta testers");
        await page.getByRole("button", { name: "Add segment" }).click();
        await page.getByRole("button", { name: "Remove segment Beta testers" }).waitFor();
        const attached = (await api("GET", `/projects/${project}/flags/${flag}/segments`)).body.data;
        assert.deepEqual(
          attached.map((s: { id: string }) => s.id),
          [segment.id],
        );
        await page.getByTestId("attached-counts").getByText("299 actors, 1 segment").waitFor();

        // Evaluate: the why comes from GET …/explain: rule, actor, segment name, bucket vs threshold.
        await flagTab(page, "Evaluate");
        const evaluate = async (ids: string) => {
          await page.getByLabel("Actor ids").fill(ids);
          await page.getByRole("button", { name: "Evaluate" }).click();
        };
        const why = page.getByTestId("why");
        await evaluate("nobody-here vip-1");
        await why.getByText("Rule: segment. vip-1 is a member of the attached segment Beta testers.").waitFor();
        await page.getByTestId("evaluation").getByText("Enabled", { exact: true }).waitFor();
        await evaluate("user-5");
        await why.getByText("Rule: attached actor. user-5 is attached to the flag directly.").waitFor();
        // Someone neither attached nor in a segment: the actor rollout decides, by bucket and threshold.
        const stranger = Array.from({ length: 40 }, (_, i) => `stranger-${i}`);
        const explained = await Promise.all(
          stranger.map(
            async (id) => (await api("GET", `/projects/${project}/flags/${flag}/explain?actorIds=${id}`)).body,
          ),
        );
        const inside = explained.find((e) => e.rule === "actor_rollout");
        const outside = explained.find((e) => e.rule === "none");
        assert.ok(inside && outside, "among 40 actors at 25 %, some are in the rollout and some are not");
        await evaluate(inside.actorId);
        await why.getByText(`Rule: actor rollout. ${inside.actorId}'s bucket`).waitFor();
        const cells = await page.getByRole("table", { name: "Per actor" }).getByRole("cell").allInnerTexts();
        assert.equal(cells[3]?.replace(/[^\d/]/g, ""), `${inside.actors[0].bucket}/25000`, "bucket / threshold");
        await evaluate(outside.actors[0].actorId);
        await why.getByText(/^No rule matched: no actor is attached or in an attached segment/).waitFor();
        await page.getByTestId("evaluation").getByText("Not enabled", { exact: true }).waitFor();

        await flagTab(page, "Targeting");
        await page.getByRole("button", { name: "Remove segment Beta testers" }).click();
        await page.getByText("No segments attached.").waitFor();
        assert.equal((await api("GET", `/projects/${project}/flags/${flag}/segments`)).body.data.length, 0);

        await flagTab(page, "History");
        await page.getByRole("table", { name: "Events" }).getByText("flag.updated").first().waitFor();
        await flagTab(page, "Evaluate");
        const snippets = await page.locator("pre").allInnerTexts();
        assert.ok(
          snippets.some((s) => s.includes(`/projects/${project}/flags/${flag}/check`)),
          "a curl snippet",
        );
        assert.ok(
          snippets.some((s) => s.includes("flags.check(")),
          "an SDK snippet",
        );
        assert.ok(
          snippets.some((s) => s.includes("FlagstaffProvider")),
          "an OpenFeature snippet",
        );
        await screenshot(page, "flag-light.png");
      });
    },
  );

  test(
    "conflicts: two people edit the same flag and segment; the second edit is a real 412, says so, reloads",
    T,
    async () => {
      const flag = "etag-flag";
      await api("POST", `/projects/${project}/flags/${flag}`, {});
      const segment = (await api("POST", `/projects/${project}/segments`, { name: "Contested" })).body;
      const [a, b] = [await openTab(browser), await openTab(browser)];
      try {
        const ifMatch: string[] = [];
        a.page.on("request", (request) => {
          if (["PATCH", "DELETE"].includes(request.method())) ifMatch.push(request.headers()["if-match"] ?? "(none)");
        });
        await signIn(a.page, url(), keys.write);
        await signIn(b.page, url(), keys.write);
        await a.page.goto(`${url()}/console/p/${project}/flags/${flag}`);
        await b.page.goto(`${url()}/console/p/${project}/flags/${flag}`);
        await a.page.getByRole("radiogroup", { name: "Status" }).waitFor();
        await b.page.getByRole("radiogroup", { name: "Status" }).waitFor();

        // A starts editing the description; meanwhile B enables the flag.
        await flagTab(a.page, "Settings");
        await a.page.getByLabel("Description", { exact: true }).fill("A's text");
        await b.page
          .getByRole("radiogroup", { name: "Status" })
          .getByRole("radio", { name: /Enabled/ })
          .click();
        await saveFlagChanges(b.page);
        await waitFor(
          "B's change applied",
          async () => (await api("GET", `/projects/${project}/flags/${flag}`)).body.status === "enabled",
        );

        // A saves: the server refuses it (412) because A's edit started from the version before B's.
        await saveFlagChanges(a.page);
        await a.page.getByText("was changed elsewhere").first().waitFor();
        assert.match(ifMatch.at(-1) ?? "", /^"flg_[^"]+\.\d+"$/, "the PATCH carried the flag's ETag");
        const after = (await api("GET", `/projects/${project}/flags/${flag}`)).body;
        assert.equal(after.description, "", "nothing of A's edit applied");
        assert.equal(after.status, "enabled", "B's change kept");
        // A's page reloaded the latest version and kept the unsaved edit.
        await flagTab(a.page, "Targeting");
        await waitFor("A sees B's status", () =>
          a.page
            .getByRole("radiogroup", { name: "Status" })
            .getByRole("radio", { name: /Enabled/ })
            .isChecked(),
        );
        assert.equal(await a.page.getByLabel("Description", { exact: true }).inputValue(), "A's text");
        // Again, on the latest version: applied.
        await a.page.getByTestId("pending-bar").getByRole("button", { name: "Save mine" }).click();
        await a.page.getByRole("dialog").getByRole("button", { name: "Save changes" }).click();
        await waitFor(
          "A's retry applied",
          async () => (await api("GET", `/projects/${project}/flags/${flag}`)).body.description === "A's text",
        );

        // A delete confirmed after someone else's change is refused too.
        await flagTab(a.page, "Settings");
        await a.page.getByRole("button", { name: "Delete flag" }).click();
        await a.page
          .getByRole("dialog")
          .getByLabel(/to confirm/)
          .fill(flag);
        await api("PATCH", `/projects/${project}/flags/${flag}`, { percentageCalls: 5 });
        await a.page.getByRole("dialog").getByRole("button", { name: "Delete flag" }).click();
        await a.page.getByText("was changed elsewhere meanwhile").waitFor();
        assert.equal((await api("GET", `/projects/${project}/flags/${flag}`)).status, 200, "not deleted");

        // The same for a segment: A renames while B adds members.
        await a.page.goto(`${url()}/console/p/${project}/segments/${segment.id}`);
        await b.page.goto(`${url()}/console/p/${project}/segments/${segment.id}`);
        await a.page.getByLabel("Name", { exact: true }).fill("Renamed by A");
        await b.page.getByLabel("Add members").fill("m1 m2");
        await b.page.getByRole("button", { name: "Add", exact: true }).click();
        await b.page.getByText("Added 2 members.").waitFor();
        await a.page.getByRole("button", { name: "Save", exact: true }).click();
        await a.page.getByText("was changed elsewhere meanwhile").waitFor();
        assert.match(ifMatch.at(-1) ?? "", /^"seg_[^"]+\.\d+"$/);
        const seg = (await api("GET", `/projects/${project}/segments/${segment.id}`)).body;
        assert.equal(seg.name, "Contested", "A's rename not applied");
        assert.equal(seg.actorsCount, 2, "B's members kept");
        await a.page.getByText("2 members").first().waitFor();
        assert.equal(await a.page.getByLabel("Name", { exact: true }).inputValue(), "Contested");
        assert.ok(!ifMatch.includes("(none)"), "every flag and segment write sent If-Match");
        assert.deepEqual([...a.problems, ...b.problems], []);
      } finally {
        await Promise.allSettled([a.context.close(), b.context.close()]);
      }
    },
  );

  test("segments: New segment, rename, describe, paste members, flags that use it, delete", T, async () => {
    await withTab(async (page) => {
      await signIn(page, url(), keys.write);
      await page.getByRole("link", { name: "Segments" }).click();
      await page.getByRole("button", { name: "New segment" }).click();
      await page.getByLabel("Name").fill("Early adopters");
      await page.getByRole("button", { name: "Create segment" }).click();
      await page.getByRole("heading", { name: "Early adopters", level: 1 }).waitFor();
      const id = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
      assert.equal((await api("GET", `/projects/${project}/segments/${id}`)).body.name, "Early adopters");

      await page.getByLabel("Name", { exact: true }).fill("Early birds");
      await page.getByLabel("Description", { exact: true }).fill("Asked for it first");
      await page.getByRole("button", { name: "Save", exact: true }).click();
      await waitFor("renamed", async () => {
        const s = (await api("GET", `/projects/${project}/segments/${id}`)).body;
        return s.name === "Early birds" && s.description === "Asked for it first";
      });

      await page.getByLabel("Add members").fill("ann, bob carl\ndora");
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page.getByText("Added 4 members.").waitFor();
      const members = (await api("GET", `/projects/${project}/segments/${id}/actors`)).body.data.map(
        (a: { actorId: string }) => a.actorId,
      );
      assert.deepEqual(members, ["ann", "bob", "carl", "dora"]);
      await page.getByText("4 members ·").waitFor();

      // Sixty more pasted: the member list pages by 50 (GET …/segments/{id}/actors), searchable.
      const more = Array.from({ length: 60 }, (_, i) => `m-${String(i).padStart(2, "0")}`);
      await page.getByLabel("Add members").fill(more.join("\n"));
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page.getByText("Added 60 members.").waitFor();
      assert.equal((await api("GET", `/projects/${project}/segments/${id}`)).body.actorsCount, 64);
      await page.getByText("64 members ·").waitFor();
      const list = page.getByRole("table", { name: "Members" });
      await waitFor("a full page", async () => (await list.getByRole("row").count()) === 51);
      await page.getByRole("navigation", { name: "Members pages" }).getByRole("button", { name: "Next →" }).click();
      await list.getByRole("link", { name: "m-59" }).waitFor();
      assert.equal(await list.getByRole("row").count(), 15, "a header and the last 14");
      await page.getByRole("searchbox", { name: "Search members" }).fill("BO");
      await waitFor("one match", async () => (await list.getByRole("row").count()) === 2);
      await list.getByRole("button", { name: "Remove bob" }).click();
      await page.getByText("No member matches.").waitFor();
      await waitFor(
        "bob removed",
        async () => (await api("GET", `/projects/${project}/segments/${id}/actors?q=bob`)).body.data.length === 0,
      );
      assert.equal((await api("GET", `/projects/${project}/segments/${id}`)).body.actorsCount, 63);
      await page.getByText("63 members ·").waitFor();

      await api("POST", `/projects/${project}/flags/for-birds`, {});
      await api("PATCH", `/projects/${project}/flags/for-birds`, { status: "conditional", addSegments: [id] });
      await page.getByRole("link", { name: "for-birds" }).waitFor({ timeout: 15_000 });
      await screenshot(page, "segment-light.png");

      await page.getByRole("button", { name: "Delete segment" }).click();
      await page
        .getByRole("dialog")
        .getByLabel(/to confirm/)
        .fill("Early birds");
      await page.getByRole("dialog").getByRole("button", { name: "Delete segment" }).click();
      await page.getByRole("heading", { name: "Segments", level: 1 }).waitFor();
      assert.equal((await api("GET", `/projects/${project}/segments/${id}`)).status, 404);
    });
  });

  test("actors: look one up: profile, flags enabled for them, their segments", T, async () => {
    await api("PUT", `/projects/${project}/actors/erin`, { name: "Erin Example" });
    const seg = (await api("POST", `/projects/${project}/segments`, { name: "Erin's club" })).body;
    await api("PATCH", `/projects/${project}/segments/${seg.id}`, { addActors: ["erin"] });
    await api("POST", `/projects/${project}/flags/for-erin`, {});
    await api("PATCH", `/projects/${project}/flags/for-erin`, { status: "conditional", addActors: ["erin"] });
    await withTab(async (page) => {
      await signIn(page, url(), keys.read);
      await page.getByRole("link", { name: "Actors" }).click();
      await page.getByLabel("Actor id").fill("erin");
      await page.getByRole("button", { name: "Look up" }).click();
      await page.getByText("Erin Example").waitFor();
      await page.getByRole("link", { name: "for-erin" }).waitFor();
      await page.getByRole("link", { name: "Erin's club" }).waitFor();
      await page.getByLabel("Actor id").fill("nobody");
      await page.getByRole("button", { name: "Look up" }).click();
      await page.getByText("never seen").waitFor();
    });
  });

  test("keys (admin): New key shows the secret once, and revoke", T, async () => {
    await withTab(async (page) => {
      await signIn(page, url(), server.config.adminApiKey!);
      await page.goto(`${url()}/console/p/${project}/keys`);
      await page.getByRole("button", { name: "New key" }).click();
      await page.getByLabel("Name").fill("from the console");
      await page.getByLabel("Role").selectOption("read");
      await page.getByRole("button", { name: "Create key" }).click();
      const secret = await page.getByTestId("secret").innerText();
      await page.getByText("shown this once").waitFor();
      assert.equal((await api("GET", `/projects/${project}`, undefined, secret)).status, 200, "the secret works");
      await page.getByRole("button", { name: "Copy secret" }).click();
      await page.getByRole("button", { name: "I stored it" }).click();
      assert.equal(await page.getByTestId("secret").count(), 0, "the secret is gone from the page");
      await page.getByRole("button", { name: "Revoke from the console" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Revoke key" }).click();
      await waitFor(
        "revoked",
        async () => (await api("GET", `/projects/${project}`, undefined, secret)).status === 401,
      );
    });
  });

  test("webhooks (admin) with deliveries, and the project's history with filters", T, async () => {
    await api("POST", `/projects/${project}/flags/history-flag`, {});
    await withTab(async (page) => {
      await signIn(page, url(), server.config.adminApiKey!);
      await page.goto(`${url()}/console/p/${project}/webhooks`);
      await page.getByLabel("URL").fill(`${receiver.url}/hook`);
      await page.getByLabel("Events").fill("flag.*");
      await page.getByRole("button", { name: "Create webhook" }).click();
      await page.getByText("Copy the signing secret now").waitFor();
      const hooks = (await api("GET", `/projects/${project}/webhooks`)).body.data;
      assert.equal(hooks.length, 1);
      assert.deepEqual(hooks[0].events, ["flag.*"]);
      await page.getByRole("button", { name: "Send test" }).click();
      await page.getByRole("table", { name: "Deliveries" }).getByText("ping").waitFor({ timeout: 15_000 });
      await page.getByRole("button", { name: "Disable" }).click();
      await waitFor(
        "disabled",
        async () => (await api("GET", `/projects/${project}/webhooks`)).body.data[0].enabled === false,
      );

      await page.getByRole("link", { name: "History" }).click();
      await page.getByLabel("Type").selectOption("flag.created");
      const table = page.getByRole("table", { name: "Events" });
      await table.getByText("flag.created").first().waitFor();
      assert.equal(await table.getByText("webhook.created").count(), 0);
      await page.getByLabel("Flag name").fill("history-flag");
      await waitFor("one event", async () => (await table.getByRole("row").count()) === 2);
    });
  });

  test("a lost connection shows a banner, and the console retries until the server answers", T, async () => {
    await withTab(async (page) => {
      await signIn(page, url(), keys.read);
      await page.getByRole("table", { name: "Flags" }).waitFor();
      await page.route("**/projects/**", (route) => route.abort("connectionrefused"));
      await page.getByText("The server cannot be reached").waitFor({ timeout: 20_000 });
      await page.unroute("**/projects/**");
      await page.getByText("The server cannot be reached").waitFor({ state: "detached", timeout: 20_000 });
    });
  });

  test("accessibility: no serious or critical axe violation on any page, light and dark; screenshots", {
    timeout: 180_000,
  }, async () => {
    const seg = (
      await api("POST", `/projects/${project}/segments`, { name: "Screenshot segment", description: "For the docs" })
    ).body;
    await api("PATCH", `/projects/${project}/segments/${seg.id}`, { addActors: ["alice", "bob", "carol"] });
    await api("PATCH", `/projects/${project}/flags/checkout-v2`, {
      status: "conditional",
      percentageActors: 10,
      addActors: ["alice"],
      addSegments: [seg.id],
    });
    const pages: [string, string][] = [
      ["projects", "/projects"],
      ["flags", `/p/${project}/flags`],
      ["flag", `/p/${project}/flags/checkout-v2`],
      ["segments", `/p/${project}/segments`],
      ["segment", `/p/${project}/segments/${seg.id}`],
      ["actor", `/p/${project}/actors/alice`],
      ["keys", `/p/${project}/keys`],
      ["webhooks", `/p/${project}/webhooks`],
      ["history", `/p/${project}/history`],
    ];
    const found: string[] = [];
    for (const scheme of ["light", "dark"] as const) {
      await withTab(async (page) => {
        await page.goto(`${url()}/console/`);
        await page
          .getByLabel("API key")
          .or(page.getByRole("button", { name: "Use an API key" }))
          .waitFor();
        found.push(...(await axeViolations(page)).map((v) => `sign-in (${scheme}): ${v}`));
        await screenshot(page, `sign-in-${scheme}.png`);
        await signIn(page, url(), server.config.adminApiKey!);
        for (const [name, path] of pages) {
          await page.goto(`${url()}/console${path}`);
          await page.locator("main h1").first().waitFor();
          await page
            .getByText(/^Loading/)
            .first()
            .waitFor({ state: "detached" })
            .catch(() => {});
          if (name === "flag") {
            // The Evaluate tab with its why, so axe sees it too.
            await flagTab(page, "Evaluate");
            await page.getByLabel("Actor ids").fill("bob alice");
            await page.getByRole("button", { name: "Evaluate" }).click();
            await page.getByTestId("why").waitFor();
          }
          found.push(...(await axeViolations(page)).map((v) => `${name} (${scheme}): ${v}`));
          await screenshot(page, `${name}-${scheme}.png`);
        }
        // The read-only view, as a read key sees it.
        await page.getByRole("button", { name: "Sign out" }).click();
        await signIn(page, url(), keys.read);
        await page.goto(`${url()}/console/p/${project}/flags/checkout-v2`);
        await page.getByRole("radiogroup", { name: "Status" }).waitFor();
        found.push(...(await axeViolations(page)).map((v) => `flag, read key (${scheme}): ${v}`));
        await screenshot(page, `flag-read-only-${scheme}.png`);
      }, scheme);
    }
    assert.deepEqual(found, []);
  });
});
