// People in the console (docs/people.md), in Chromium against a real server: password sign-in and out, its
// refusals, a member's rights (a read grant, no grant), the People and Access pages of admins, personal
// keys, and a history that names people. Every change made on screen is checked through the API.
import assert from "node:assert/strict";
import { once } from "node:events";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  createProject,
  DIALECTS,
  freePort,
  type OidcTestProvider,
  signInAt,
  signInInBrowser,
  startOidcProvider,
  startServer,
  type TestServer,
  waitFor,
  WebhookReceiver,
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
  selectShowsWhole,
  showKeyForm,
} from "./helpers/console.js";

const dialect = DIALECTS[0] ?? "sqlite";
const T = { timeout: 120_000 };
const PASSWORD = "correct horse battery staple";

interface Person {
  id: string;
  email: string;
  name: string;
}

describe(`people in the web console in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let server: TestServer;
  let browser: Browser;
  let project: string;
  let other: string;
  let admin: Person;

  const api = <T = any>(method: string, path: string, body?: unknown, key?: string | null) =>
    server.request<T>(method, path, { ...(body === undefined ? {} : { body }), ...(key === undefined ? {} : { key }) });
  const url = () => server.url;

  /** Creates a person with the admin key; a member with a grant on `project` when `grant` is given. */
  async function person(
    email: string,
    name: string,
    role: "admin" | "member" = "member",
    grant?: { project: string; role: "admin" | "write" | "read" },
  ): Promise<Person> {
    const res = await api("POST", "/users", { email, name, role, password: PASSWORD });
    assert.equal(res.status, 201, res.text);
    if (grant) {
      const put = await api("PUT", `/projects/${grant.project}/access/${res.body.id}`, { role: grant.role });
      assert.equal(put.status, 200, put.text);
    }
    return { id: res.body.id, email, name };
  }

  before(
    async () => {
      server = await startServer({ dialect });
      project = await createProject(server, "shop");
      other = await createProject(server, "walk");
      admin = await person("ada@example.com", "Ada Lovelace", "admin");
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );
  after(
    async () => {
      await closeBrowser(browser);
      await server?.close();
    },
    { timeout: 30_000 },
  );

  async function withTab(fn: (page: Page, sent: string[]) => Promise<void>, scheme: "light" | "dark" = "light") {
    const tab = await openTab(browser, scheme);
    // Every API request the page makes with an Authorization header: a person's session sends none.
    const withAuthorization: string[] = [];
    tab.page.on("request", (request) => {
      if (request.headers().authorization !== undefined) withAuthorization.push(`${request.method()} ${request.url()}`);
    });
    try {
      await fn(tab.page, withAuthorization);
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  }

  /** Signs in with an e-mail and a password, and waits for the header. */
  async function passwordSignIn(page: Page, email: string, password = PASSWORD, path = "/"): Promise<void> {
    await page.goto(`${url()}/console${path}`);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByTestId("signed-in").waitFor();
  }

  test("password sign-in: the session lives in the cookie, survives a reload, and signs out", T, async () => {
    await withTab(async (page, sent) => {
      // Loading the console signed out asks whether a session exists without a 401 (which Chromium logs as
      // an error in the console): no failed request, no error logged.
      const refused: string[] = [];
      const logged: string[] = [];
      page.on("response", (r) => {
        if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
      });
      page.on("console", (m) => {
        if (m.type() === "error") logged.push(m.text());
      });
      await page.goto(`${url()}/console/`);
      await page.getByLabel("E-mail").waitFor();
      await page.reload();
      await page.getByLabel("E-mail").waitFor();
      assert.deepEqual(refused, [], "no request refused while signed out");
      assert.deepEqual(logged, [], "nothing logged as an error");
      // What GET /auth/methods offers: the form, and the key for automation.
      await page.getByRole("button", { name: "Use an API key" }).waitFor();
      assert.equal(await page.getByRole("link", { name: /Sign in with/ }).count(), 0, "no single sign-on configured");
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "people-sign-in.png");

      await passwordSignIn(page, admin.email);
      await page.waitForURL("**/console/projects");
      assert.match(await page.getByTestId("signed-in").innerText(), /Ada Lovelace/);
      assert.match(await page.getByTestId("signed-in").innerText(), /role admin/);
      assert.equal(
        await page.evaluate(() => sessionStorage.length),
        0,
        "nothing in sessionStorage: the cookie holds it",
      );
      assert.equal(await page.evaluate(() => document.cookie), "", "the cookie is HttpOnly");
      const cookies = await page.context().cookies();
      assert.ok(
        cookies.some((c) => c.name.endsWith("flagstaff_session") && c.httpOnly),
        "the browser holds the session cookie",
      );

      // A reload: whoami with the cookie alone signs the console in again, on the same page.
      await page.goto(`${url()}/console/p/${project}/flags`);
      await page.getByRole("table", { name: "Flags" }).or(page.getByText("No flags")).first().waitFor();
      assert.match(await page.getByTestId("signed-in").innerText(), /Ada Lovelace/);
      assert.deepEqual(refused, [], "nothing refused signed in either");
      // A change made with the session (Sec-Fetch-Site: same-origin, no key).
      await page.getByRole("button", { name: "New flag" }).click();
      await page.getByLabel("Name", { exact: true }).fill("made-by-ada");
      await page.getByRole("button", { name: "Create flag" }).click();
      await page.getByRole("heading", { name: "made-by-ada", level: 1 }).waitFor();
      assert.equal((await api("GET", `/projects/${project}/flags/made-by-ada`)).status, 200);
      assert.deepEqual(sent, [], "no request carried an Authorization header");

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("E-mail").waitFor();
      await page.reload();
      await page.getByLabel("E-mail").waitFor();
      const after = await page.context().cookies();
      assert.ok(!after.some((c) => c.name.endsWith("flagstaff_session") && c.value !== ""), "the cookie is cleared");
    });
  });

  test("a wrong password is refused with a plain message; too many say how long to wait", T, async () => {
    const who = await person("tries@example.com", "Tries Often");
    await withTab(async (page) => {
      await page.goto(`${url()}/console/`);
      await page.getByLabel("E-mail").fill(who.email);
      await page.getByLabel("Password").fill("not the password at all");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByRole("alert").getByText("Wrong e-mail or password.").waitFor();
      // An unknown e-mail reads the same: the answer never tells which e-mails exist.
      await page.getByLabel("E-mail").fill("nobody@example.com");
      await page.getByLabel("Password").fill("not the password at all");
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByRole("alert").getByText("Wrong e-mail or password.").waitFor();
      await screenshot(page, "people-sign-in-wrong.png");
      // Five failures in a row lock the account: 429 with Retry-After, said in words.
      for (let i = 0; i < 4; i++) {
        const res = await api("POST", "/auth/login", { email: who.email, password: "still not it, no" }, null);
        assert.equal(res.status, 401);
      }
      await page.getByLabel("E-mail").fill(who.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page
        .getByRole("alert")
        .getByText(/Too many failed attempts: wait \d+ (seconds|minutes?), then try again/)
        .waitFor();
    });
  });

  test("single sign-on's refusal (?signInError=) is said in words", T, async () => {
    await withTab(async (page) => {
      await page.goto(`${url()}/console/?signInError=domain_not_allowed`);
      await page.getByRole("alert").getByText("domain may not sign in").waitFor();
      assert.doesNotMatch(page.url(), /signInError/, "dropped from the URL: a reload starts afresh");
      await page.goto(`${url()}/console/?signInError=something_new`);
      await page.getByRole("alert").getByText("Single sign-on failed (something_new)").waitFor();
    });
  });

  test(
    "a read member sees the project read-only, with the reason; a project without a grant is not there",
    T,
    async () => {
      await api("POST", `/projects/${project}/flags/read-by-rita`, {});
      const rita = await person("rita@example.com", "Rita Reader", "member", { project, role: "read" });
      await withTab(async (page) => {
        await passwordSignIn(page, rita.email);
        // One grant: the start page is that project.
        await page.waitForURL(`**/console/p/${project}/flags`);
        assert.match(await page.getByTestId("signed-in").innerText(), /role read/);
        await page.getByRole("note").getByText("Your access to this project is read").waitFor();
        assert.equal(await page.getByRole("button", { name: "New flag" }).isDisabled(), true);
        await page.locator("#flags-ro").getByText("Your access to this project is read").waitFor();
        await page.getByRole("link", { name: "read-by-rita" }).click();
        const status = page.getByRole("radiogroup", { name: "Status" });
        await status.waitFor();
        assert.equal(await status.getByRole("radio", { name: /Enabled/ }).isDisabled(), true);
        await page.locator("#status-ro").getByText("Your access to this project is read").waitFor();
        assert.equal(await page.getByRole("link", { name: "Keys" }).count(), 0, "no keys page for read");
        assert.equal(await page.getByRole("link", { name: "Access" }).count(), 0, "no access page for read");
        assert.equal(await page.getByRole("link", { name: "People" }).count(), 0, "no people page for a member");
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "people-member-read.png", false);

        // The project list holds the granted project only; walk is not there, and its link says so.
        await page.getByRole("link", { name: "Projects" }).click();
        await page.getByRole("table", { name: "Projects" }).waitFor();
        await page.getByRole("link", { name: project, exact: true }).waitFor();
        assert.equal(await page.getByRole("link", { name: other, exact: true }).count(), 0);
        assert.equal(await page.getByRole("button", { name: "Create project" }).isDisabled(), true);
        await page.getByText("Only admins do this").waitFor();
        assert.equal(await page.getByRole("button", { name: `Delete project ${project}` }).isDisabled(), true);
        await page.goto(`${url()}/console/p/${other}/flags`);
        await page.getByRole("heading", { name: `No access to ${other}` }).waitFor();
        assert.equal(await page.getByRole("link", { name: "Flags", exact: true }).count(), 0, "no project tabs");

        // A grant raised meanwhile: the next page shows it, without signing in again.
        await api("PUT", `/projects/${project}/access/${rita.id}`, { role: "write" });
        await page.goto(`${url()}/console/p/${project}/flags`);
        await waitFor("New flag enabled", () => page.getByRole("button", { name: "New flag" }).isEnabled());
      });
    },
  );

  test("a member granted no project is told so, and whom to ask, instead of a form they may not use", T, async () => {
    const nora = await person("nora@example.com", "Nora Newcomer");
    await withTab(async (page) => {
      await passwordSignIn(page, nora.email);
      await page.waitForURL("**/console/projects");
      const said = page.getByTestId("no-project");
      await said.waitFor();
      assert.match(
        await said.innerText(),
        /You have no project yet\. Ask a Flagstaff admin, or an admin of the project/,
      );
      assert.match(await said.innerText(), /nora@example\.com/);
      assert.equal(await page.getByRole("button", { name: "Create project" }).count(), 0, "no New project form");
      assert.equal(await page.getByLabel("Project id").count(), 0);
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "people-member-no-project.png");
      // Granted meanwhile: the project shows without signing in again.
      await api("PUT", `/projects/${project}/access/${nora.id}`, { role: "read" });
      await page.goto(`${url()}/console/projects`);
      await page.getByRole("link", { name: project, exact: true }).waitFor();
    });
  });

  test("People (admin): create with errors at the field, disable, reset the password, delete", T, async () => {
    await withTab(async (page) => {
      await passwordSignIn(page, admin.email);
      await page.getByRole("link", { name: "People" }).click();
      await page.getByRole("table", { name: "People" }).waitFor();
      // The new person's role shows its words whole, at 1280 px and on a phone.
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        for (const role of ["member", "admin"]) {
          await page.getByLabel("Role", { exact: true }).selectOption(role);
          const shown = await selectShowsWhole(page.getByLabel("Role", { exact: true }));
          assert.ok(shown.whole, `${width} px: ${shown.detail}`);
        }
      }
      await page.getByLabel("Role", { exact: true }).selectOption("member");
      await page.setViewportSize({ width: 1280, height: 900 });
      // Ada's own row: what would lock her out is disabled, with the reason.
      assert.equal(await page.getByRole("button", { name: `Disable ${admin.email}` }).isDisabled(), true);
      assert.equal(await page.getByLabel(`Role of ${admin.email}`).isDisabled(), true);
      await page.getByText("You cannot disable, demote or delete yourself").first().waitFor();

      // A password too short: the server's 400 (/password) under the password field.
      await page.getByLabel("E-mail").fill("bob@example.com");
      await page.getByLabel("Name").fill("Bob Builder");
      await page.getByLabel("Password (optional)").fill("short");
      await page.getByRole("button", { name: "Add person" }).click();
      const passwordError = page.locator("#person-password-error");
      await passwordError.waitFor();
      assert.match(await passwordError.innerText(), /Password \(optional\) must be at least 12 characters/);
      await page.getByLabel("Password (optional)").fill(PASSWORD);
      await page.getByRole("button", { name: "Add person" }).click();
      await page.getByRole("status").getByText("bob@example.com was added").waitFor();
      const bob = (await api("GET", "/users?limit=100")).body.data.find((u: any) => u.email === "bob@example.com");
      assert.ok(bob, "created");
      assert.equal(bob.role, "member");
      assert.equal(bob.hasPassword, true);

      // The same e-mail again (other case): 409 user_exists, under the e-mail field.
      await page.getByLabel("E-mail").fill("BOB@example.com");
      await page.getByLabel("Name").fill("Bob Again");
      await page.getByRole("button", { name: "Add person" }).click();
      await page.locator("#person-email-error").getByText("E-mail is taken").waitFor();
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "people-users.png");

      // Disable: Bob cannot sign in (the same refusal as a wrong password); enable again.
      await page.getByRole("button", { name: "Disable bob@example.com" }).click();
      await page.getByRole("button", { name: "Enable bob@example.com" }).waitFor();
      assert.equal((await api("GET", `/users/${bob.id}`)).body.disabled, true);
      assert.equal((await api("POST", "/auth/login", { email: bob.email, password: PASSWORD }, null)).status, 401);
      await page.getByRole("button", { name: "Enable bob@example.com" }).click();
      await page.getByRole("button", { name: "Disable bob@example.com" }).waitFor();
      assert.equal((await api("GET", `/users/${bob.id}`)).body.disabled, false);

      // Make him an admin, then a member again.
      await page.getByLabel("Role of bob@example.com").selectOption("admin");
      await waitFor("bob is admin", async () => (await api("GET", `/users/${bob.id}`)).body.role === "admin");
      await page.getByLabel("Role of bob@example.com").selectOption("member");
      await waitFor("bob is member", async () => (await api("GET", `/users/${bob.id}`)).body.role === "member");

      // Reset the password: too short is refused in the dialog; a good one works at sign-in.
      await page.getByRole("button", { name: "Password of bob@example.com" }).click();
      const dialog = page.getByRole("dialog", { name: "Password of bob@example.com" });
      await dialog.getByLabel("New password").fill("tiny");
      await dialog.getByRole("button", { name: "Set password" }).click();
      await dialog.locator("#reset-password-error").waitFor();
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "people-users-password.png", false);
      await dialog.getByLabel("New password").fill("a brand new passphrase");
      await dialog.getByRole("button", { name: "Set password" }).click();
      await dialog.waitFor({ state: "hidden" });
      assert.equal((await api("POST", "/auth/login", { email: bob.email, password: PASSWORD }, null)).status, 401);
      const login = await api("POST", "/auth/login", { email: bob.email, password: "a brand new passphrase" }, null);
      assert.equal(login.status, 200, login.text);

      // Delete, with the e-mail typed.
      await page.getByRole("button", { name: "Delete bob@example.com" }).click();
      const confirm = page.getByRole("dialog", { name: "Delete bob@example.com?" });
      await confirm.getByRole("textbox").fill("bob@example.com");
      await confirm.getByRole("button", { name: "Delete person" }).click();
      await waitFor("bob is gone", async () => (await api("GET", `/users/${bob.id}`)).status === 404);
      await page.getByRole("cell", { name: "bob@example.com", exact: true }).waitFor({ state: "detached" });
    });
  });

  test(
    "Access (project admins): grant, change the role, remove; a project admin who is no admin cannot pick people",
    T,
    async () => {
      const carl = await person("carl@example.com", "Carl Member");
      const pam = await person("pam@example.com", "Pam Project-Admin", "member", { project, role: "admin" });
      await withTab(async (page) => {
        await passwordSignIn(page, admin.email);
        await page.goto(`${url()}/console/p/${project}/access`);
        await page.getByRole("heading", { name: "Access", level: 1 }).waitFor();
        await page.getByLabel("Person", { exact: true }).selectOption({ label: `${carl.email} (${carl.name})` });
        await page.getByLabel("Role", { exact: true }).selectOption("write");
        await page.getByRole("button", { name: "Grant access" }).click();
        await page.getByRole("cell", { name: carl.email, exact: true }).waitFor();
        const grants = async () => (await api("GET", `/projects/${project}/access`)).body.data as any[];
        assert.equal((await grants()).find((g) => g.userId === carl.id)?.role, "write");
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "people-access.png");

        await page.getByLabel(`Role of ${carl.email}`).selectOption("read");
        await waitFor("carl reads", async () => (await grants()).find((g) => g.userId === carl.id)?.role === "read");
        await page.getByRole("button", { name: `Remove ${carl.email}` }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Remove access" }).click();
        await waitFor("carl removed", async () => !(await grants()).some((g) => g.userId === carl.id));
        await page.getByRole("cell", { name: carl.email, exact: true }).waitFor({ state: "detached" });
      });
      await withTab(async (page) => {
        // Pam administers the project but is no admin: she cannot list people, so no picker; roles she may change.
        await passwordSignIn(page, pam.email);
        await page.getByRole("link", { name: "Access" }).click();
        await page.getByText("An admin adds people to a project").waitFor();
        assert.equal(await page.getByLabel("Person", { exact: true }).count(), 0);
        await page.getByRole("link", { name: "Keys" }).waitFor();
        await page.getByRole("link", { name: "Webhooks" }).waitFor();
        await screenshot(page, "people-access-project-admin.png");
      });
    },
  );

  test("history names the person who changed a flag, and their name lists their changes", T, async () => {
    const wes = await person("wes@example.com", "Wes Writer", "member", { project, role: "write" });
    await api("POST", `/projects/${project}/flags/wes-flag`, {});
    await withTab(async (page) => {
      await passwordSignIn(page, wes.email);
      await page.goto(`${url()}/console/p/${project}/flags/wes-flag`);
      const status = page.getByRole("radiogroup", { name: "Status" });
      await status.getByRole("radio", { name: /Enabled/ }).click();
      await saveFlagChanges(page);
      await waitFor(
        "wes-flag enabled",
        async () => (await api("GET", `/projects/${project}/flags/wes-flag`)).body.status === "enabled",
      );
      await page.getByRole("link", { name: "History" }).click();
      const events = page.getByRole("table", { name: "Events" });
      await events.waitFor();
      const name = events.getByRole("link", { name: "Wes Writer" }).first();
      await name.waitFor();
      assert.equal(await name.locator("..").getAttribute("title"), wes.email);
      // Someone else's change, so the filter has something to leave out.
      await api("PATCH", `/projects/${project}/flags/wes-flag`, { description: "by the admin key" });
      await events.getByText("by the admin key").waitFor();
      await name.click();
      await page.waitForURL(`**/history?actor=${wes.id}`);
      await page.getByRole("status").getByText("Changes by Wes Writer").waitFor();
      await events.getByText("by the admin key").waitFor({ state: "detached" });
      const rows = await events.locator("tbody tr").count();
      const his = await events.locator("tbody tr", { hasText: "Wes Writer" }).count();
      assert.equal(rows, his, "only Wes's changes");
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "people-history.png");
      await page.getByRole("link", { name: "Show everyone's changes" }).click();
      await events.getByText("by the admin key").waitFor();
    });
  });

  test(
    "a protected environment: a writer's configuration controls are disabled with the reason, the definition is not",
    T,
    async () => {
      const vault = await createProject(server, "vault");
      assert.equal(
        (await api("POST", `/projects/${vault}/environments`, { id: "staging", name: "Staging" })).status,
        201,
      );
      const made = await api("PATCH", `/projects/${vault}/environments/production`, { protected: true });
      assert.equal(made.status, 200, made.text);
      await api("POST", `/projects/${vault}/flags/guarded`, {});
      const vic = await person("vic@example.com", "Vic Writer", "member", { project: vault, role: "write" });
      await withTab(async (page) => {
        await passwordSignIn(page, vic.email, PASSWORD, `/p/${vault}/flags/guarded?environment=production`);
        const status = page.getByRole("radiogroup", { name: "Status" });
        await status.waitFor();
        assert.equal(await status.getByRole("radio", { name: /Enabled/ }).isDisabled(), true);
        await page.locator("#status-ro").getByText("Production is protected: only admins of this project").waitFor();
        await page.getByTestId("protected-note").waitFor();
        assert.equal(await page.getByLabel("Add actors").isDisabled(), true);
        assert.equal(await page.getByRole("button", { name: "Add rule" }).isDisabled(), true);
        // The definition belongs to every environment: still the writer's.
        await flagTab(page, "Settings");
        assert.equal(await page.getByLabel("Description", { exact: true }).isEditable(), true);
        await page.getByLabel("Description", { exact: true }).fill("Vic's words");
        await saveFlagChanges(page);
        await waitFor(
          "the description saved",
          async () => (await api("GET", `/projects/${vault}/flags/guarded`)).body.description === "Vic's words",
        );
        assert.deepEqual(await axeViolations(page), []);
        await screenshot(page, "people-protected.png", false);

        // In staging everything is open, but Copy to… has nowhere to go: production is protected.
        await page.getByLabel("Environment", { exact: true }).selectOption("staging");
        await flagTab(page, "Targeting");
        await waitFor("status enabled in staging", () => status.getByRole("radio", { name: /Enabled/ }).isEnabled());
        assert.equal(await page.getByRole("button", { name: "Copy to…" }).isDisabled(), true);
        await page.locator("#copy-blocked").getByText("The other environments are protected").waitFor();
      });
    },
  );

  test("Me: personal keys (secret once, sign in with one, revoke) and sign out everywhere", T, async () => {
    const kim = await person("kim@example.com", "Kim Keys", "member", { project, role: "write" });
    await withTab(async (page) => {
      await passwordSignIn(page, kim.email);
      await page.getByRole("link", { name: "Kim Keys" }).click();
      await page.getByRole("heading", { name: "Kim Keys", level: 1 }).waitFor();
      // She holds write on shop: an admin key would be more.
      await page.getByLabel("Project", { exact: true }).selectOption(project);
      const roles = page.getByLabel("Role", { exact: true });
      assert.equal(await roles.locator("option[value=admin]").isDisabled(), true);
      await page.getByLabel("Name").fill("kim's laptop");
      await roles.selectOption("write");
      await page.getByRole("button", { name: "Create personal key" }).click();
      const secret = await page.getByTestId("secret").innerText();
      assert.match(secret, /\S{20,}/);
      const who = (await api("GET", "/whoami", undefined, secret)).body;
      assert.equal(who.user?.id, kim.id);
      await page.getByRole("button", { name: "I stored it" }).click();
      assert.equal(await page.getByTestId("secret").count(), 0, "shown once");
      await page.getByRole("table", { name: "Personal keys" }).getByText("kim's laptop").waitFor();
      assert.deepEqual(await axeViolations(page), []);
      await screenshot(page, "people-me.png");

      // Sign out everywhere: this session ends too, and the cookie no longer works.
      await page.getByRole("button", { name: "Sign out everywhere" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Sign out everywhere" }).click();
      await page.getByText("You signed out everywhere").waitFor();

      // The personal key signs in as Kim, reaching shop only; it cannot mint more keys.
      await showKeyForm(page);
      await page.getByLabel("API key").fill(secret);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByTestId("signed-in").getByText("of Kim Keys").waitFor();
      await page.waitForURL(`**/console/p/${project}/flags`);
      assert.equal(await page.getByRole("button", { name: "New flag" }).isEnabled(), true);
      await page.goto(`${url()}/console/me`);
      assert.equal(await page.getByRole("button", { name: "Create personal key" }).isDisabled(), true);
      await page.getByText("Only a signed-in session creates personal keys").waitFor();
      await page.getByRole("button", { name: "Revoke kim's laptop" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Revoke key" }).click();
      // The key revoked itself: the next request is a 401, and the console says so.
      await page.getByText("You were signed out").waitFor();
      assert.equal((await api("GET", "/whoami", undefined, secret)).status, 401);
    });
  });
});

describe(`single sign-on in the web console in Chromium [${dialect}]`, { skip: browserSkip }, () => {
  let provider: OidcTestProvider;
  let server: TestServer;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let front: Server | undefined;
  const frontSockets = new Set<Socket>();
  /** PUBLIC_URL: the provider sends the browser back there, so it is known before the server starts. */
  let publicUrl: string;

  before(
    async () => {
      const port = await freePort();
      publicUrl = `http://127.0.0.1:${port}`;
      const client = {
        clientId: "flagstaff",
        clientSecret: "a-client-secret-of-some-length",
        redirectUris: [`${publicUrl}/auth/oidc/callback`],
      };
      provider = await startOidcProvider({
        accounts: [
          {
            id: "ada",
            email: "ada@example.com",
            emailVerified: true,
            name: "Ada Lovelace",
            groups: ["flagstaff-admins"],
          },
          { id: "grace", email: "grace@example.com", emailVerified: true, name: "Grace Hopper", groups: ["engineers"] },
          { id: "olga", email: "olga@elsewhere.org", emailVerified: true, name: "Olga Outside" },
        ],
        clients: [client],
      });
      server = await startServer({
        dialect,
        env: {
          PUBLIC_URL: publicUrl,
          OIDC_ISSUER: provider.issuer,
          OIDC_CLIENT_ID: client.clientId,
          OIDC_CLIENT_SECRET: client.clientSecret,
          OIDC_ALLOWED_DOMAINS: "example.com",
          OIDC_NAME: "Keycloak",
          OIDC_ROLE_CLAIM: "groups",
          OIDC_ADMIN_VALUES: "flagstaff-admins",
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        },
      });
      receiver = await WebhookReceiver.start();
      // The harness's server listens on a port of its own choosing: PUBLIC_URL's port forwards to it.
      const target = new URL(server.url);
      front = createServer((socket) => {
        const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
        frontSockets.add(socket).add(upstream);
        const close = () => {
          socket.destroy();
          upstream.destroy();
          frontSockets.delete(socket);
          frontSockets.delete(upstream);
        };
        socket.on("error", close).on("close", close);
        upstream.on("error", close).on("close", close);
        socket.pipe(upstream).pipe(socket);
      }).listen(port, "127.0.0.1");
      await once(front, "listening");
      await createProject(server, "shop");
      assert.equal((await server.request("POST", "/projects/shop/flags/checkout", { body: {} })).status, 201);
      const hook = await server.request("POST", "/projects/shop/webhooks", {
        body: { url: `${receiver.url}/hook`, events: ["flag.updated"] },
      });
      assert.equal(hook.status, 201, hook.text);
      const ada = await server.request("POST", "/users", {
        body: { email: "ada@example.com", name: "Ada Lovelace", role: "admin" },
      });
      assert.equal(ada.status, 201, ada.text);
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );
  after(
    async () => {
      await closeBrowser(browser);
      for (const socket of frontSockets) socket.destroy();
      await new Promise<void>((resolve) => (front ? front.close(() => resolve()) : resolve()));
      await Promise.allSettled([server?.close(), provider?.close(), receiver?.close()]);
    },
    { timeout: 30_000 },
  );

  test("Sign in with Keycloak: the provider, and back on the page the tab was opened on", T, async () => {
    const tab = await openTab(browser);
    try {
      await tab.page.goto(`${publicUrl}/console/p/shop/history`);
      const button = tab.page.getByRole("link", { name: "Sign in with Keycloak" });
      await button.waitFor();
      assert.equal(
        await button.getAttribute("href"),
        `/auth/oidc/login?returnTo=${encodeURIComponent("/console/p/shop/history")}`,
      );
      await tab.page.getByLabel("E-mail").waitFor();
      assert.deepEqual(await axeViolations(tab.page), []);
      await screenshot(tab.page, "people-sign-in-sso.png");
      await button.click();
      await tab.page.waitForURL((url) => url.origin === provider.issuer);
      await signInInBrowser(tab.page, "ada");
      await tab.page.waitForURL(`${publicUrl}/console/p/shop/history`);
      await tab.page.getByTestId("signed-in").getByText("Ada Lovelace").waitFor();
      await tab.page.getByRole("heading", { name: "History", level: 1 }).waitFor();

      // Ada changes a flag: the history and the webhook's payload name her.
      await tab.page.goto(`${publicUrl}/console/p/shop/flags/checkout`);
      const status = tab.page.getByRole("radiogroup", { name: "Status" });
      await status.getByRole("radio", { name: /Conditional/ }).click();
      await saveFlagChanges(tab.page);
      await waitFor(
        "the flag conditional",
        async () => (await server.request("GET", "/projects/shop/flags/checkout")).body.status === "conditional",
      );
      await tab.page.goto(`${publicUrl}/console/p/shop/history`);
      await tab.page.getByRole("row").filter({ hasText: "flag.updated" }).getByText("Ada Lovelace").waitFor();
      await screenshot(tab.page, "people-history-sso.png");
      const [delivery] = await waitFor("the flag.updated webhook", () => receiver.at("/hook"), {
        until: (r) => r.length > 0,
      });
      const actor = JSON.parse(delivery!.body).actor;
      assert.equal(actor.type, "user");
      assert.equal(actor.email, "ada@example.com");
      assert.equal(actor.name, "Ada Lovelace");
      assert.equal(actor.via, "session");
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  });

  test("a refused single sign-on comes back with the reason in words", T, async () => {
    const tab = await openTab(browser);
    try {
      await tab.page.goto(`${publicUrl}/console/`);
      await tab.page.getByRole("link", { name: "Sign in with Keycloak" }).click();
      await tab.page.waitForURL((url) => url.origin === provider.issuer);
      await signInInBrowser(tab.page, "olga");
      await tab.page.getByRole("alert").getByText("domain may not sign in").waitFor();
      assert.equal(await tab.page.getByTestId("signed-in").count(), 0);
      assert.doesNotMatch(tab.page.url(), /signInError/);
      const users = (await server.request("GET", "/users")).body.data as { email: string }[];
      assert.ok(!users.some((u) => u.email === "olga@elsewhere.org"), "nobody was created");
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  });

  test("the groups claim decides the role: Grace (engineers) comes in a member and sees no project", T, async () => {
    const tab = await openTab(browser);
    try {
      await tab.page.goto(`${publicUrl}/console/`);
      await tab.page.getByRole("link", { name: "Sign in with Keycloak" }).click();
      await tab.page.waitForURL((url) => url.origin === provider.issuer);
      await signInInBrowser(tab.page, "grace");
      await tab.page.getByTestId("signed-in").getByText("Grace Hopper").waitFor();
      const grace = ((await server.request("GET", "/users")).body.data as { email: string; role: string }[]).find(
        (u) => u.email === "grace@example.com",
      );
      assert.equal(grace?.role, "member", "created at her first sign-in, a member");
      assert.equal(await tab.page.getByRole("link", { name: "People" }).count(), 0, "no People page for a member");
      await tab.page.goto(`${publicUrl}/console/projects`);
      await tab.page.getByRole("heading", { name: "Projects", level: 1 }).waitFor();
      assert.equal(await tab.page.getByRole("link", { name: "shop" }).count(), 0, "no grant, no project");
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  });

  test("a tampered state and a replayed callback are refused in words and sign nobody in", T, async () => {
    const tab = await openTab(browser);
    try {
      await tab.page.goto(`${publicUrl}/console/`);
      // The browser holds the attempt's cookie; the provider's answer is fetched apart, then tampered with.
      const started = tab.page.waitForResponse((r) => r.url().startsWith(`${publicUrl}/auth/oidc/login`));
      await tab.page.getByRole("link", { name: "Sign in with Keycloak" }).click();
      const authorizationUrl = (await started).headers().location as string;
      await tab.page.waitForURL((url) => url.origin === provider.issuer);
      const callback = await signInAt(provider, authorizationUrl, "ada");
      callback.searchParams.set("state", `${callback.searchParams.get("state")}x`);
      await tab.page.goto(callback.href);
      await tab.page.getByRole("alert").getByText("could not be checked").waitFor();
      assert.equal(await tab.page.getByTestId("signed-in").count(), 0);

      // A real sign-in in the browser, then its callback visited again after signing out.
      let used: string | undefined;
      tab.page.on("request", (r) => {
        if (r.url().startsWith(`${publicUrl}/auth/oidc/callback`)) used = r.url();
      });
      await tab.page.goto(`${publicUrl}/console/`);
      await tab.page.getByRole("link", { name: "Sign in with Keycloak" }).click();
      await tab.page.waitForURL((url) => url.origin === provider.issuer);
      await signInInBrowser(tab.page, "ada");
      await tab.page.getByTestId("signed-in").getByText("Ada Lovelace").waitFor();
      await tab.page.getByRole("button", { name: "Sign out" }).click();
      await tab.page.getByRole("link", { name: "Sign in with Keycloak" }).waitFor();
      assert.ok(used, "the callback was seen");
      await tab.page.goto(used);
      await tab.page.getByRole("alert").getByText("could not be checked").waitFor();
      assert.equal(await tab.page.getByTestId("signed-in").count(), 0, "the replay signed nobody in");
      await screenshot(tab.page, "people-sign-in-replayed.png");
      assert.deepEqual(tab.problems, [], "no errors in the page");
    } finally {
      await tab.context.close();
    }
  });

  test("an expired session sends the person back to the sign-in page with the reason", T, async () => {
    const tab = await openTab(browser);
    try {
      await tab.page.goto(`${publicUrl}/console/p/shop/flags`);
      await tab.page.getByRole("link", { name: "Sign in with Keycloak" }).click();
      await tab.page.waitForURL((url) => url.origin === provider.issuer);
      await signInInBrowser(tab.page, "ada");
      await tab.page.getByTestId("signed-in").getByText("Ada Lovelace").waitFor();
      // Unused for longer than SESSION_IDLE_MINUTES, as the server's clock sees it.
      await server.database.db.updateTable("sessions").set({ last_seen_at: "2000-01-01T00:00:00.000Z" }).execute();
      await tab.page.getByRole("heading", { name: "Flags", level: 1 }).waitFor();
      // The console's next request is refused 401, and it signs out and says why. That request may be the
      // page's own polling, before the click below lands (then the link is gone and the click only times
      // out), or the history's first one: either way the reason is shown.
      await tab.page
        .getByRole("link", { name: "History" })
        .click({ timeout: 5_000 })
        .catch(() => {});
      await tab.page.getByText("your session ended").waitFor({ timeout: 30_000 });
      await tab.page.getByRole("link", { name: "Sign in with Keycloak" }).waitFor();
      assert.equal(await tab.page.getByTestId("signed-in").count(), 0);
    } finally {
      await tab.context.close();
    }
  });
});
