// The SDK's people, access, personal keys and sign-in (issue 32, finding 9; oneself and the session's
// state, issue 33), against a real server on both databases: users.*, access.*, personalKeys.* and auth.*, typed from @flagstaff/core/schemas, with the
// server's refusals as FlagstaffErrors. A session is a cookie: the test's fetch keeps it as a browser would
// (and says Sec-Fetch-Site: same-origin, as the console's own pages do).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ADMIN_KEY, createProject, DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";
import { type FetchLike, FlagstaffClient, FlagstaffError, GRANT_ROLES, USER_ROLES } from "../src/index.js";

const PASSWORD = "correct horse battery staple";

async function rejectsWith(promise: Promise<unknown>, status: number, code: string): Promise<FlagstaffError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FlagstaffError, `expected a FlagstaffError, got ${String(error)}`);
    assert.equal(`${error.status} ${error.code}`, `${status} ${code}`, error.message);
    return error;
  }
  assert.fail(`expected ${status} ${code}, but the call succeeded`);
}

/** A fetch with a cookie jar of one session, as a browser on the server's origin. */
function browserFetch(): { fetch: FetchLike; cookie(): string | undefined } {
  let cookie: string | undefined;
  const fetchImpl: FetchLike = async (url, init) => {
    const headers = new Headers(init.headers);
    headers.set("sec-fetch-site", "same-origin");
    if (cookie !== undefined) headers.set("cookie", cookie);
    const response = await fetch(url, { ...init, headers });
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(";")[0] ?? "";
      if (/^flagstaff_session=/.test(pair)) cookie = /=$/.test(pair) || /Max-Age=0/i.test(line) ? undefined : pair;
    }
    return response;
  };
  return { fetch: fetchImpl, cookie: () => cookie };
}

for (const dialect of DIALECTS) {
  describe(`SDK: people, access, personal keys, sign-in [${dialect}]`, () => {
    let server: TestServer;
    let admin: FlagstaffClient;
    const email = () => `p-${randomBytes(4).toString("hex")}@example.com`;

    before(async () => {
      server = await startServer({ dialect });
      admin = new FlagstaffClient({ baseUrl: server.url, apiKey: ADMIN_KEY });
    });
    after(() => server.close());

    test("users: create, list, get, update, delete; the contract's roles; refusals", async () => {
      assert.deepEqual([...USER_ROLES], ["admin", "member"]);
      const ada = await admin.users.create({ email: email(), name: "Ada", password: PASSWORD });
      assert.deepEqual([ada.role, ada.disabled, ada.hasPassword], ["member", false, true]);
      assert.equal((await admin.users.get(ada.id)).email, ada.email);
      const listed = await admin.users.list({ limit: 1 }).toArray();
      assert.ok(listed.some((u) => u.id === ada.id));
      const promoted = await admin.users.update(ada.id, { role: "admin", name: "Ada L." });
      assert.deepEqual([promoted.role, promoted.name], ["admin", "Ada L."]);
      await rejectsWith(admin.users.create({ email: ada.email.toUpperCase(), name: "Again" }), 409, "user_exists");
      await admin.users.delete(ada.id);
      await rejectsWith(admin.users.get(ada.id), 404, "user_not_found");
      // A project key may not manage people.
      const project = await createProject(server);
      const writeKey = await server.request("POST", `/projects/${project}/keys`, {
        body: { role: "write", name: "w" },
      });
      const writer = new FlagstaffClient({ baseUrl: server.url, apiKey: writeKey.body.key });
      await rejectsWith(writer.users.list().toArray(), 403, "forbidden");
    });

    test("access: grant, list, change, revoke a project's grants", async () => {
      assert.deepEqual([...GRANT_ROLES], ["admin", "write", "read"]);
      const project = await createProject(server);
      const grace = await admin.users.create({ email: email(), name: "Grace" });
      const granted = await admin.access.grant(project, grace.id, "write");
      assert.deepEqual([granted.userId, granted.email, granted.role], [grace.id, grace.email, "write"]);
      await admin.access.grant(project, grace.id, "read");
      assert.deepEqual(
        (await admin.access.list(project)).map((g) => [g.userId, g.role]),
        [[grace.id, "read"]],
      );
      await admin.access.revoke(project, grace.id);
      assert.deepEqual(await admin.access.list(project), []);
      await rejectsWith(admin.access.revoke(project, grace.id), 404, "grant_not_found");
      await rejectsWith(admin.access.grant(project, "usr_nobody", "read"), 404, "user_not_found");
    });

    test("auth and personal keys: sign in, make and use a key, revoke it, sign out everywhere, log out", async () => {
      const project = await createProject(server);
      const linus = await admin.users.create({ email: email(), name: "Linus", password: PASSWORD });
      await admin.access.grant(project, linus.id, "write");

      const browser = browserFetch();
      const console_ = new FlagstaffClient({ baseUrl: server.url, fetch: browser.fetch });
      const methods = await console_.auth.methods();
      assert.deepEqual(methods, { password: true, oidc: null });
      await rejectsWith(console_.auth.login(linus.email, "wrong password!"), 401, "invalid_credentials");
      const user = await console_.auth.login(linus.email, PASSWORD);
      assert.deepEqual([user.id, user.email, user.role], [linus.id, linus.email, "member"]);
      assert.ok(browser.cookie(), "the session cookie was set");
      assert.equal((await console_.whoami()).user?.id, linus.id);

      // A personal key, made in the session: its secret once, then listed without it; it works as a key.
      const made = await console_.personalKeys.create({ name: "laptop", project, role: "write" });
      assert.match(made.key, /^fsk_/);
      assert.deepEqual(
        (await console_.personalKeys.list()).map((k) => [k.id, k.name, k.projectId, "key" in k]),
        [[made.id, "laptop", project, false]],
      );
      const byKey = new FlagstaffClient({ baseUrl: server.url, apiKey: made.key });
      assert.equal((await byKey.flags.create(project, "made-by-linus")).name, "made-by-linus");
      // A key cannot mint more keys: only a session does.
      await rejectsWith(byKey.personalKeys.create({ name: "more", project }), 403, "forbidden");
      await console_.personalKeys.revoke(made.id);
      await rejectsWith(byKey.flags.get(project, "made-by-linus"), 401, "unauthorized");
      assert.deepEqual(await console_.personalKeys.list(), []);

      // Signed out everywhere: this session and another one end.
      const other = browserFetch();
      const elsewhere = new FlagstaffClient({ baseUrl: server.url, fetch: other.fetch });
      await elsewhere.auth.login(linus.email, PASSWORD);
      await console_.auth.signOutEverywhere();
      await rejectsWith(elsewhere.whoami(), 401, "unauthorized");

      // Logging out ends this session only.
      await console_.auth.login(linus.email, PASSWORD);
      await elsewhere.auth.login(linus.email, PASSWORD);
      await console_.auth.logout();
      await rejectsWith(console_.whoami(), 401, "unauthorized");
      assert.equal((await elsewhere.whoami()).user?.id, linus.id);
    });

    test("oneself: auth.signedIn, users.me, auth.setPassword; a lockout's Retry-After as retryAfterSeconds", async () => {
      const margaret = await admin.users.create({ email: email(), name: "Margaret", password: PASSWORD });
      const browser = browserFetch();
      const console_ = new FlagstaffClient({ baseUrl: server.url, fetch: browser.fetch });
      // Signed out: 200 and false, where whoami would be 401.
      assert.equal(await console_.auth.signedIn(), false);
      await console_.auth.login(margaret.email, PASSWORD);
      assert.equal(await console_.auth.signedIn(), true);
      const me = await console_.users.me();
      assert.deepEqual([me.id, me.email, me.role, me.hasPassword], [margaret.id, margaret.email, "member", true]);
      // users.me is a person's route: a service key, the admin key included, is refused.
      await rejectsWith(admin.users.me(), 403, "forbidden");

      // A wrong current password is 401 invalid_credentials, and this session lives on.
      const other = browserFetch();
      const elsewhere = new FlagstaffClient({ baseUrl: server.url, fetch: other.fetch });
      await elsewhere.auth.login(margaret.email, PASSWORD);
      const NEW = "another long enough password";
      await rejectsWith(
        console_.auth.setPassword({ currentPassword: "not the password", newPassword: NEW }),
        401,
        "invalid_credentials",
      );
      assert.equal((await console_.whoami()).user?.id, margaret.id);
      // Changed: the other sessions end, this one stays; the new password signs in.
      const changed = await console_.auth.setPassword({ currentPassword: PASSWORD, newPassword: NEW });
      assert.deepEqual([changed.id, changed.hasPassword], [margaret.id, true]);
      await rejectsWith(elsewhere.whoami(), 401, "unauthorized");
      assert.equal((await console_.whoami()).user?.id, margaret.id);
      assert.equal((await elsewhere.auth.login(margaret.email, NEW)).id, margaret.id);
      // A key may not set a password: only a session.
      const made = await console_.personalKeys.create({ name: "script" });
      const byKey = new FlagstaffClient({ baseUrl: server.url, apiKey: made.key });
      assert.equal((await byKey.users.me()).id, margaret.id, "a personal key reads its person");
      await rejectsWith(byKey.auth.setPassword({ currentPassword: NEW, newPassword: PASSWORD }), 403, "forbidden");

      // Locked after failed sign-ins: 429 too_many_attempts, and how long to wait, from Retry-After.
      const stranger = new FlagstaffClient({ baseUrl: server.url, fetch: browserFetch().fetch });
      for (let i = 1; i <= 5; i++)
        await rejectsWith(stranger.auth.login(margaret.email, `wrong ${i}`), 401, "invalid_credentials");
      const locked = await rejectsWith(stranger.auth.login(margaret.email, NEW), 429, "too_many_attempts");
      assert.ok(
        typeof locked.retryAfterSeconds === "number" && locked.retryAfterSeconds > 0 && locked.retryAfterSeconds <= 60,
        `retryAfterSeconds ${locked.retryAfterSeconds}`,
      );
      // An answer without Retry-After leaves it undefined.
      assert.equal(
        (await rejectsWith(admin.users.get("usr_nobody"), 404, "user_not_found")).retryAfterSeconds,
        undefined,
      );
    });
  });
}
