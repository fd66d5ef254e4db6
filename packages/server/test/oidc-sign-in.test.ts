// Single sign-on through the server's routes (docs/people.md, "Single sign-on"): a real OpenID provider
// (oidc-provider, from the harness), a real server that knows its own address (PUBLIC_URL on a reserved
// port), and the browser's part played by fetch with the cookies carried by hand; one case in Chromium.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  cancelSignInAt,
  createProject,
  DIALECTS,
  expectProblem,
  freePort,
  ManualClock,
  type OidcTestAccount,
  type OidcTestProvider,
  signInAt,
  signInInBrowser,
  startOidcProvider,
  startServer,
  type TestServer,
  waitFor,
} from "@flagstaff/test-harness";
import type { Browser } from "playwright-core";
import { browserSkip, closeBrowser, launchChromium, SCREENSHOTS } from "./helpers/browser.js";
import { asSession, createPerson, rowCounts } from "./helpers/people.js";

const CLIENT_ID = "flagstaff";
const CLIENT_SECRET = "a-client-secret-of-some-length";

/** The provider's accounts; `switcher`'s groups are changed between sign-ins (the provider reads them each time). */
const accounts = () => {
  const list: OidcTestAccount[] = [
    { id: "ada", email: "ada@example.com", emailVerified: true, name: "Ada Lovelace", groups: ["flagstaff-admins"] },
    { id: "bob", email: "bob@example.com", emailVerified: true, name: "Bob", groups: ["devs"] },
    { id: "carol", email: "Carol@Example.COM", emailVerified: true, name: "Carol" },
    { id: "switcher", email: "sw@example.com", emailVerified: true, name: "Switcher", groups: ["devs"] },
    { id: "unverified", email: "eve@example.com", emailVerified: false, name: "Eve" },
    { id: "outsider", email: "olga@elsewhere.org", emailVerified: true, name: "Olga" },
    { id: "dora", email: "dora@example.com", emailVerified: true, name: "Dora" },
    { id: "browser", email: "bea@example.com", emailVerified: true, name: "Bea Browser", groups: ["devs"] },
    // U+212A, the Kelvin sign: JavaScript's toLowerCase() makes it k, but it is another address.
    { id: "kelvin", email: "\u212Aate@example.com", emailVerified: true, name: "Kelvin" },
    // Addresses POST /users refuses, which a provider may still send.
    { id: "two-ats", email: "a@b@example.com", emailVerified: true, name: "Two Ats" },
    { id: "spaced", email: "sp ace@example.com", emailVerified: true },
    { id: "control", email: "ctl\u0001@example.com", emailVerified: true },
    { id: "long", email: `${"l".repeat(250)}@example.com`, emailVerified: true },
    { id: "messy", email: "messy@example.com", emailVerified: true, name: ` Messy\u0000\n${"n".repeat(200)}` },
  ];
  return list;
};

interface Callback {
  status: number;
  location: string | null;
  /** The session cookie set, `name=value`. */
  session: string | undefined;
  setCookies: string[];
}

for (const dialect of DIALECTS) {
  describe(`single sign-on [${dialect}]`, () => {
    let provider: OidcTestProvider;
    let server: TestServer;
    let publicUrl: string;
    let accountList: OidcTestAccount[];
    const clock = new ManualClock(Date.now());

    before(async () => {
      const port = await freePort();
      publicUrl = `http://127.0.0.1:${port}`;
      accountList = accounts();
      provider = await startOidcProvider({
        accounts: accountList,
        clients: [
          { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [`${publicUrl}/auth/oidc/callback`] },
        ],
      });
      server = await startServer({
        dialect,
        clock,
        env: {
          PORT: String(port),
          PUBLIC_URL: publicUrl,
          OIDC_ISSUER: provider.issuer,
          OIDC_CLIENT_ID: CLIENT_ID,
          OIDC_CLIENT_SECRET: CLIENT_SECRET,
          OIDC_ALLOWED_DOMAINS: "example.com",
          OIDC_ROLE_CLAIM: "groups",
          OIDC_ADMIN_VALUES: "flagstaff-admins,ops",
          OIDC_NAME: "Keycloak",
        },
      });
      assert.equal(server.url, publicUrl, "the server listens where PUBLIC_URL says");
    });
    after(async () => {
      await server?.close();
      await provider?.close();
    });

    /** Starts a sign-in: answers the provider's authorization URL and the attempt's cookie (`name=value`). */
    async function begin(returnTo?: string) {
      const query = returnTo === undefined ? "" : `?returnTo=${encodeURIComponent(returnTo)}`;
      const res = await fetch(`${server.url}/auth/oidc/login${query}`, { redirect: "manual" });
      assert.equal(res.status, 302, await res.text());
      const location = res.headers.get("location") ?? "";
      const line = res.headers.getSetCookie().find((l) => l.startsWith("flagstaff_oidc=")) ?? "";
      return { authorizationUrl: location, cookie: line.split(";")[0] ?? "", cookieLine: line };
    }

    /** The browser coming back from the provider: the callback's path and query, with `cookie`. */
    async function callback(url: URL, cookie?: string): Promise<Callback> {
      const res = await fetch(`${server.url}${url.pathname}${url.search}`, {
        redirect: "manual",
        headers: cookie === undefined ? {} : { cookie },
      });
      await res.body?.cancel();
      const setCookies = res.headers.getSetCookie();
      const session = setCookies.map((l) => l.split(";")[0]).find((p) => /^flagstaff_session=./.test(p ?? ""));
      return { status: res.status, location: res.headers.get("location"), session, setCookies };
    }

    /** A whole sign-in of an account; answers the callback's answer. */
    async function signInAs(accountId: string, returnTo?: string): Promise<Callback> {
      const { authorizationUrl, cookie } = await begin(returnTo);
      return callback(await signInAt(provider, authorizationUrl, accountId), cookie);
    }

    const whoami = (cookie: string) => server.request("GET", "/whoami", asSession(cookie));
    const userByEmail = async (email: string) => {
      const res = await server.request("GET", "/users?limit=100");
      return res.body.data.find((u: { email: string }) => u.email === email);
    };
    const refusedWith = (result: Callback, reason: string) => {
      assert.equal(result.status, 302);
      assert.equal(result.location, `/console/?signInError=${reason}`);
      assert.equal(result.session, undefined, "no session");
      // The attempt's cookie is cleared whatever happened.
      assert.ok(result.setCookies.some((l) => /^flagstaff_oidc=;/.test(l) && /Max-Age=0/i.test(l)));
    };

    test("/auth/methods offers single sign-on by its name, beside the password", async () => {
      const res = await server.request("GET", "/auth/methods", { key: null });
      assert.deepEqual(res.body, { password: true, oidc: { name: "Keycloak" } });
    });

    test("/auth/oidc/login redirects to the provider with PKCE, state and nonce, and sets the attempt's cookie", async () => {
      const { authorizationUrl, cookie, cookieLine } = await begin();
      const url = new URL(authorizationUrl);
      assert.equal(url.origin, provider.issuer);
      const q = url.searchParams;
      assert.equal(q.get("client_id"), CLIENT_ID);
      assert.equal(q.get("redirect_uri"), `${publicUrl}/auth/oidc/callback`);
      assert.equal(q.get("response_type"), "code");
      assert.equal(q.get("scope"), "openid email profile");
      assert.equal(q.get("code_challenge_method"), "S256");
      assert.ok(q.get("code_challenge") && q.get("nonce"));
      assert.equal(cookie, `flagstaff_oidc=${q.get("state")}`, "the cookie holds the state");
      const attributes = cookieLine.split(";").map((a) => a.trim().toLowerCase());
      for (const wanted of ["httponly", "samesite=lax", "path=/auth/oidc", "max-age=600"]) {
        assert.ok(attributes.includes(wanted), `${wanted} in ${cookieLine}`);
      }
      // Two attempts, two states.
      assert.notEqual((await begin()).cookie, cookie);
    });

    test("a first sign-in adds a member, signs them in and goes back to the console", async () => {
      const result = await signInAs("bob");
      assert.equal(result.status, 302);
      assert.equal(result.location, "/console/");
      assert.ok(result.session, JSON.stringify(result.setCookies));
      const me = await whoami(result.session);
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.via, "session");
      assert.deepEqual({ ...me.body.user, id: "" }, { id: "", email: "bob@example.com", name: "Bob", role: "member" });
      assert.deepEqual(me.body.grants, []);
      const user = await userByEmail("bob@example.com");
      assert.equal(user.hasPassword, false);
      assert.equal(user.lastSignInAt, new Date(clock.now()).toISOString());
      // Signing in again is the same person, with a new session.
      const again = await signInAs("bob");
      assert.ok(again.session && again.session !== result.session);
      assert.equal((await whoami(again.session)).body.user.id, user.id);
    });

    test("returnTo brings the person back to a console page, never elsewhere", async () => {
      const result = await signInAs("bob", "/console/projects/demo?tab=flags");
      assert.equal(result.location, "/console/projects/demo?tab=flags");
      for (const elsewhere of [
        "https://evil.example/console/",
        "//evil.example/console/",
        "/consolex",
        "/console\\..\\x",
      ]) {
        assert.equal((await signInAs("bob", elsewhere)).location, "/console/", elsewhere);
      }
    });

    /** The single sign-on attempts stored whose data holds `marker`. */
    const attemptsWith = async (marker: string) =>
      (
        await server.database.db
          .selectFrom("sign_in_tokens")
          .select(["id_hash", "data"])
          .where("kind", "=", "oidc")
          .where("data", "like", `%${marker}%`)
          .execute()
      ).map((row) => ({ idHash: row.id_hash, data: JSON.parse(row.data ?? "{}") }));

    test("a returnTo with CR, LF or another control character is refused (400) before anything is written", async () => {
      const marker = `ctl-${Date.now()}`;
      for (const returnTo of [
        `/console/${marker}\r\nSet-Cookie: flagstaff_session=planted`,
        `/console/${marker}\n`,
        `/console/${marker}\r`,
        `/console/${marker}\ta`,
        `/console/${marker}\u0085`,
        `/console/${marker}\u0000`,
      ]) {
        // Not followed: before this was refused, it redirected to the provider.
        const answer = await fetch(`${server.url}/auth/oidc/login?returnTo=${encodeURIComponent(returnTo)}`, {
          redirect: "manual",
        });
        const text = await answer.text();
        const res = { status: answer.status, headers: answer.headers, text, body: text ? JSON.parse(text) : undefined };
        expectProblem(res, 400, "invalid_request");
        assert.equal(res.body.errors[0].path, "/query/returnTo", JSON.stringify(returnTo));
        assert.deepEqual(res.headers.getSetCookie(), [], "no attempt cookie");
        assert.equal(res.headers.get("location"), null);
      }
      assert.deepEqual(await attemptsWith(marker), [], "no attempt stored");
    });

    test("the callback's Location is printable ASCII: a console path is percent-encoded, a stored one checked again", async () => {
      const encoded = await signInAs("bob", "/console/projects/€uro/flags?q=grün#x y");
      assert.equal(encoded.status, 302);
      assert.equal(encoded.location, "/console/projects/%E2%82%ACuro/flags?q=gr%C3%BCn#x%20y");
      assert.ok(encoded.session);
      // Dot segments that climb out of the console come back to its home.
      assert.equal((await signInAs("bob", "/console/../metrics")).location, "/console/");

      // An attempt stored with CR and LF in its returnTo (as an earlier version could): the callback
      // answers the console's home, with the session, never the raw header.
      const marker = `stored-${Date.now()}`;
      const { authorizationUrl, cookie } = await begin(`/console/${marker}`);
      const [stored] = await attemptsWith(marker);
      assert.ok(stored, "the attempt is stored");
      await server.database.db
        .updateTable("sign_in_tokens")
        .set({ data: JSON.stringify({ ...stored.data, returnTo: `/console/${marker}\r\nSet-Cookie: x=1` }) })
        .where("id_hash", "=", stored.idHash)
        .execute();
      const result = await callback(await signInAt(provider, authorizationUrl, "bob"), cookie);
      assert.equal(result.status, 302);
      assert.equal(result.location, "/console/");
      assert.ok(result.session);
      assert.ok(!result.setCookies.some((line) => line.startsWith("x=")));
    });

    test("the role follows the group claim at each sign-in", async () => {
      const first = await signInAs("ada");
      assert.equal((await whoami(first.session as string)).body.user.role, "admin");
      assert.equal((await server.request("GET", "/users", asSession(first.session as string))).status, 200);

      const switcher = accountList.find((a) => a.id === "switcher") as OidcTestAccount & { groups: string[] };
      const asMember = await signInAs("switcher");
      assert.equal((await whoami(asMember.session as string)).body.user.role, "member");
      switcher.groups = ["devs", "ops"];
      const asAdmin = await signInAs("switcher");
      assert.equal((await whoami(asAdmin.session as string)).body.user.role, "admin");
      // The earlier session is the same person: it is an admin's now too.
      assert.equal((await whoami(asMember.session as string)).body.user.role, "admin");
      switcher.groups = [];
      const demoted = await signInAs("switcher");
      assert.equal((await whoami(demoted.session as string)).body.user.role, "member");
      assert.equal((await userByEmail("sw@example.com")).role, "member");
    });

    test("a person added by an admin is found by e-mail, whatever its case", async () => {
      const carol = await createPerson(server, { email: "carol@example.com", name: "Carol (by admin)" });
      const result = await signInAs("carol");
      assert.equal(result.location, "/console/");
      const me = await whoami(result.session as string);
      assert.equal(me.body.user.id, carol.id);
      assert.equal(me.body.user.email, "carol@example.com");
    });

    test("e-mails compare as POST /users stores them: the Kelvin sign is not a k, so it is another person", async () => {
      const kate = await createPerson(server, { email: "kate@example.com", name: "Kate" });
      const result = await signInAs("kelvin");
      assert.equal(result.location, "/console/");
      const me = await whoami(result.session as string);
      assert.equal(me.status, 200, me.text);
      assert.notEqual(me.body.user.id, kate.id, "not signed in as kate@example.com");
      assert.equal(me.body.user.email, "\u212Aate@example.com");
      const untouched = await server.request("GET", `/users/${kate.id}`);
      assert.deepEqual(untouched.body, kate, "Kate neither signed in nor changed");
      // POST /users says the same: that address is taken now, and is not Kate's.
      expectProblem(
        await server.request("POST", "/users", { body: { email: "\u212AATE@EXAMPLE.COM", name: "K" } }),
        409,
        "user_exists",
      );
      // A–Z still fold: KATE@example.com is Kate's.
      expectProblem(
        await server.request("POST", "/users", { body: { email: "KATE@example.com", name: "K" } }),
        409,
        "user_exists",
      );
    });

    test("an e-mail POST /users refuses is refused at sign-on (email_invalid), and no one is added", async () => {
      const before = await rowCounts(server, ["users"]);
      for (const account of ["two-ats", "spaced", "control", "long"]) {
        const email = accountList.find((a) => a.id === account)?.email;
        // The API's own answer for the same address.
        expectProblem(
          await server.request("POST", "/users", { body: { email, name: "Refused" } }),
          400,
          "invalid_request",
        );
        refusedWith(await signInAs(account), "email_invalid");
      }
      assert.deepEqual(await rowCounts(server, ["users"]), before, "no one added");
    });

    test("a provider's name is taken as POST /users would: no control characters, at most 128 characters", async () => {
      const result = await signInAs("messy");
      const me = await whoami(result.session as string);
      assert.equal(me.body.user.name, `Messy${"n".repeat(123)}`);
    });

    test("a refused domain or an unverified e-mail sends back with the reason and adds no one", async () => {
      refusedWith(await signInAs("outsider"), "domain_not_allowed");
      assert.equal(await userByEmail("olga@elsewhere.org"), undefined);
      refusedWith(await signInAs("unverified"), "email_unverified");
      assert.equal(await userByEmail("eve@example.com"), undefined);
    });

    test("a disabled person is refused (account_disabled) and stays disabled", async () => {
      const dora = await createPerson(server, { email: "dora@example.com" });
      await server.request("PATCH", `/users/${dora.id}`, { body: { disabled: true } });
      refusedWith(await signInAs("dora"), "account_disabled");
      assert.equal((await server.request("GET", `/users/${dora.id}`)).body.disabled, true);
    });

    test("a tampered state, a missing or foreign attempt cookie: state_mismatch", async () => {
      const { authorizationUrl, cookie } = await begin();
      const back = await signInAt(provider, authorizationUrl, "bob");
      const tampered = new URL(back);
      tampered.searchParams.set("state", `${back.searchParams.get("state")}x`);
      refusedWith(await callback(tampered, cookie), "state_mismatch");
      // The same forgery in the cookie too: no such attempt was ever started.
      refusedWith(await callback(tampered, `flagstaff_oidc=${tampered.searchParams.get("state")}`), "attempt_expired");
      refusedWith(await callback(back), "state_mismatch");
      const other = await begin();
      refusedWith(await callback(back, other.cookie), "state_mismatch");
      const noState = new URL(back);
      noState.searchParams.delete("state");
      refusedWith(await callback(noState, cookie), "state_mismatch");
      // None of these used the attempt up: the right cookie still completes it.
      const done = await callback(back, cookie);
      assert.equal(done.location, "/console/");
      assert.ok(done.session);
    });

    test("a replayed callback is refused: an attempt is used once (attempt_expired)", async () => {
      const { authorizationUrl, cookie } = await begin();
      const back = await signInAt(provider, authorizationUrl, "bob");
      assert.ok((await callback(back, cookie)).session);
      refusedWith(await callback(back, cookie), "attempt_expired");
    });

    test("an attempt older than ten minutes has expired", async () => {
      const { authorizationUrl, cookie } = await begin();
      const back = await signInAt(provider, authorizationUrl, "bob");
      clock.advance(10 * 60_000 + 1000);
      refusedWith(await callback(back, cookie), "attempt_expired");
    });

    test("a person who cancels at the provider is sent back with provider_error", async () => {
      const { authorizationUrl, cookie } = await begin();
      const back = await cancelSignInAt(provider, authorizationUrl);
      assert.equal(back.searchParams.get("error"), "access_denied");
      refusedWith(await callback(back, cookie), "provider_error");
    });

    describe("in Chromium", { skip: browserSkip }, () => {
      let browser: Browser;
      before(async () => {
        browser = await launchChromium();
      });
      after(() => closeBrowser(browser));

      test("sign in through the provider's pages, then change a flag from the page: the history names the person", async () => {
        const project = await createProject(server);
        await server.request("POST", `/projects/${project}/flags/from-browser`, { body: {} });
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        try {
          const page = await context.newPage();
          page.setDefaultTimeout(15_000);
          await page.goto(`${server.url}/auth/oidc/login?returnTo=${encodeURIComponent("/console/")}`);
          assert.equal(new URL(page.url()).origin, provider.issuer, "at the provider's login page");
          await signInInBrowser(page, "browser");
          await page.waitForURL((url) => url.origin === server.url && url.pathname.startsWith("/console/"));
          assert.equal(new URL(page.url()).searchParams.get("signInError"), null);
          const cookies = await context.cookies(server.url);
          const session = cookies.find((c) => c.name === "flagstaff_session");
          assert.ok(session, JSON.stringify(cookies));
          assert.equal(session.httpOnly, true);
          assert.equal(session.sameSite, "Lax");
          const person = await userByEmail("bea@example.com");
          assert.equal(person.role, "member");
          // A member: granted write on the project by the admin key.
          await server.request("PUT", `/projects/${project}/access/${person.id}`, { body: { role: "write" } });

          // From the page: the browser sends the cookie and Sec-Fetch-Site: same-origin by itself.
          const answer = await page.evaluate(async (path) => {
            const res = await fetch(path, {
              method: "PATCH",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ description: "changed in the browser", status: "enabled" }),
            });
            return { status: res.status, body: await res.json() };
          }, `/projects/${project}/flags/from-browser`);
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          assert.equal(answer.body.description, "changed in the browser");
          // The page cannot read the cookie: it is HttpOnly.
          assert.equal(await page.evaluate(() => document.cookie.includes("flagstaff_session")), false);

          const history = await waitFor(
            "the browser's change in the history",
            () => server.request("GET", `/projects/${project}/events?actor=${person.id}`),
            { until: (res) => res.status === 200 && res.body.data.length === 1 },
          );
          assert.deepEqual(history.body.data[0].actor, {
            type: "user",
            id: person.id,
            email: "bea@example.com",
            name: "Bea Browser",
            via: "session",
          });
          await page.screenshot({ path: join(SCREENSHOTS, "oidc-signed-in.png"), fullPage: true });
        } finally {
          await context.close();
        }
      });
    });
  });
}
