// Release safety in the console (issue 35), in Chromium against a real server, with two people: a project
// admin makes production require an approval on the Environments page; a writer edits a flag there, and
// the page's Save becomes "Request approval…", which opens a change request and shows it; the writer may
// not approve their own; a second person approves it with a comment and applies it; the flag is then on,
// through the API. Then a change scheduled for later shows on the Changes page's schedule, and a timed
// rollout is set on the flag page and shows the step in force. Screenshots in light and dark, and axe.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createProject, DIALECTS, startServer, type TestServer, waitFor } from "@flagstaff/test-harness";
import type { Browser, Page } from "playwright-core";
import { axeViolations, browserSkip, closeBrowser, launchChromium, openTab, screenshot } from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };
const PASSWORD = "correct horse battery staple";

describe(`change requests in the web console in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let project: string;
  const api = <T = any>(method: string, path: string, body?: unknown) =>
    server.request<T>(method, path, body === undefined ? {} : { body });

  async function person(email: string, name: string, role: "admin" | "write") {
    const res = await api("POST", "/users", { email, name, password: PASSWORD });
    assert.equal(res.status, 201, res.text);
    const put = await api("PUT", `/projects/${project}/access/${res.body.id}`, { role });
    assert.equal(put.status, 200, put.text);
    return res.body as { id: string };
  }

  async function signInAs(page: Page, email: string, path = "/"): Promise<void> {
    await page.goto(`${server.url}/console${path}`);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("signed-in").waitFor();
  }

  before(
    async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "shop");
      await person("ada@example.com", "Ada Admin", "admin");
      await person("wes@example.com", "Wes Writer", "write");
      await person("rae@example.com", "Rae Reviewer", "write");
      assert.equal((await api("POST", `/projects/${project}/flags/checkout`, {})).status, 201);
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );
  after(async () => {
    await closeBrowser(browser);
    await server?.close();
  });

  test("an admin requires approval; a writer requests, another person approves and applies", T, async () => {
    const admin = await openTab(browser);
    const writer = await openTab(browser);
    const reviewer = await openTab(browser, "dark");
    try {
      // The admin requires one approval in production.
      await signInAs(admin.page, "ada@example.com", `/p/${project}/environments`);
      await admin.page.getByLabel("Approvals required in Production").selectOption("1");
      await admin.page.getByText("1 approval", { exact: true }).waitFor();
      await admin.page.getByLabel("Authors may approve their own requests in Production").waitFor();
      assert.deepEqual(await axeViolations(admin.page), []);
      await screenshot(admin.page, "environments-approvals.png");
      assert.equal((await api("GET", `/projects/${project}/environments/production`)).body.requiredApprovals, 1);

      // The writer edits the flag: the page says approvals are required, and Save asks for one.
      await signInAs(writer.page, "wes@example.com", `/p/${project}/flags/checkout`);
      const page = writer.page;
      await page.getByTestId("approvals-note").waitFor();
      await page.getByRole("radio", { name: /Enabled/ }).check();
      await page.getByTestId("pending-bar").getByRole("button", { name: "Request approval…" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByTestId("approval-note").waitFor();
      await dialog.getByLabel("Title").fill("Launch the new checkout");
      await dialog.getByLabel("Description (optional)").fill("Payments team signed off");
      await screenshot(page, "change-request-dialog.png", false);
      await dialog.getByRole("button", { name: "Request approval" }).click();
      await page.getByRole("heading", { name: "Launch the new checkout" }).waitFor();
      await page.getByTestId("approvals").getByText("0 of 1 required").waitFor();
      assert.equal((await api("GET", `/projects/${project}/flags/checkout`)).body.status, "disabled");
      const url = page.url();
      // The author may not approve their own request: the server says so where the button is.
      await page.getByRole("button", { name: "Approve" }).click();
      await page
        .getByRole("alert")
        .getByText(/may not review this request/)
        .waitFor();
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "change-request-open.png");

      // The reviewer opens the request from the Changes page, sees the diff, approves with a comment.
      await signInAs(reviewer.page, "rae@example.com", `/p/${project}/changes`);
      const r = reviewer.page;
      await r.getByRole("link", { name: "Launch the new checkout" }).click();
      assert.equal(r.url(), url);
      const diff = r.getByRole("table", { name: "Changes to checkout" });
      await diff.getByRole("rowheader", { name: "status" }).waitFor();
      assert.match(await diff.innerText(), /disabled[\s\S]*enabled/);
      await r.getByLabel("Comment (optional)").fill("Looks right");
      await r.getByRole("button", { name: "Approve" }).click();
      await r.getByTestId("approvals").getByText("1 of 1 required").waitFor();
      await r.getByText("Looks right").waitFor();
      assert.deepEqual(await axeViolations(r), []);
      await screenshot(r, "change-request-approved-dark.png");
      await r.getByRole("button", { name: "Apply now" }).click();
      await r.getByText("applied", { exact: true }).first().waitFor();
      await waitFor(
        "the flag enabled",
        async () => (await api("GET", `/projects/${project}/flags/checkout`)).body.status,
        {
          until: (s) => s === "enabled",
        },
      );
      const history = await api("GET", `/projects/${project}/events?type=flag.updated`);
      assert.ok(history.body.data[0].changeRequest, "the flag's event names the request");
      assert.equal(history.body.data[0].actor.name, "Rae Reviewer");
      // The writer's page follows (it polls): applied.
      await page.getByText("applied", { exact: true }).first().waitFor();
      assert.deepEqual(writer.problems, []);
      assert.deepEqual(reviewer.problems, []);
    } finally {
      await admin.context.close();
      await writer.context.close();
      await reviewer.context.close();
    }
  });

  test("a change scheduled for later shows on the schedule; a timed rollout shows its step", T, async () => {
    assert.equal(
      (await api("POST", `/projects/${project}/environments`, { id: "staging", name: "Staging" })).status,
      201,
    );
    assert.equal((await api("POST", `/projects/${project}/flags/banner`, {})).status, 201);
    const tab = await openTab(browser);
    try {
      const page = tab.page;
      await signInAs(page, "wes@example.com", `/p/${project}/flags/banner?environment=staging`);
      await page.getByRole("radio", { name: /Enabled/ }).check();
      await page.getByTestId("pending-bar").getByRole("button", { name: "Review and save" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Schedule for a later time").check();
      const tomorrow = new Date(Date.now() + 86_400_000);
      const local = new Date(tomorrow.getTime() - tomorrow.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
      await dialog.getByLabel("Apply at").fill(local);
      await dialog.getByRole("button", { name: "Schedule changes" }).click();
      await page.getByText(/approved: applied at its time/).waitFor();
      assert.equal((await api("GET", `/projects/${project}/flags/banner?environment=staging`)).body.status, "disabled");
      await page.getByRole("link", { name: "← Changes" }).click();
      const timeline = page.getByRole("list", { name: "Schedule" });
      await timeline.getByText(/applies "Change banner in Staging"/).waitFor();
      await screenshot(page, "changes-schedule.png");
      assert.deepEqual(await axeViolations(page), []);

      // A timed rollout on the flag page: a step an hour ago and one tomorrow.
      await page.goto(`${server.url}/console/p/${project}/flags/banner?environment=staging`);
      const plan = page.getByTestId("rollout-plan");
      await plan.getByText("No timed rollout.").waitFor();
      const hourAgo = new Date(Date.now() - 3_600_000);
      await plan
        .getByLabel("Time of the new step")
        .fill(new Date(hourAgo.getTime() - hourAgo.getTimezoneOffset() * 60_000).toISOString().slice(0, 16));
      await plan.getByLabel("New step's percentage").selectOption("10");
      await plan.getByRole("button", { name: "Add step" }).click();
      await plan.getByLabel("Time of the new step").fill(local);
      await plan.getByLabel("New step's percentage").selectOption("50");
      await plan.getByRole("button", { name: "Add step" }).click();
      await page.getByTestId("pending-bar").getByRole("button", { name: "Review and save" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Save changes" }).click();
      await plan.getByTestId("plan-now").getByText("10% of actors").waitFor();
      await plan.getByText("in force", { exact: true }).waitFor();
      const flag = (await api("GET", `/projects/${project}/flags/banner?environment=staging`)).body;
      assert.equal(flag.rolloutPlan.steps.length, 2);
      assert.equal(flag.rolloutPlan.percentageActors, 10);
      await screenshot(page, "flag-rollout-plan.png");
      assert.deepEqual(await axeViolations(page), []);
      assert.deepEqual(tab.problems, []);
    } finally {
      await tab.context.close();
    }
  });
});
