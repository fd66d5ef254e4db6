// Single sign-on's client (features/people/oidc-client.ts) against a real OpenID provider (oidc-provider,
// from the harness): every reason a sign-in is refused, and who comes in when it is not.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  browserSkip,
  cancelSignInAt,
  closeBrowser,
  freePort,
  launchChromium,
  type OidcTestProvider,
  signInAt,
  signInInBrowser,
  startOidcProvider,
  WebhookReceiver,
} from "@flagstaff/test-harness";
import type { Browser } from "playwright-core";
import { OidcError, type OidcErrorCode, OidcSignIn, type OidcSettings } from "../src/features/people/oidc-client.js";

const REDIRECT_URI = "http://flagstaff.test/auth/oidc/callback";
const CLIENT = { clientId: "flagstaff", clientSecret: "a-client-secret-of-some-length", redirectUris: [REDIRECT_URI] };
const ACCOUNTS = [
  {
    id: "ada",
    email: "ada@example.com",
    emailVerified: true,
    name: "Ada Lovelace",
    groups: ["flagstaff-admins", "devs"],
  },
  { id: "bob", email: "bob@example.com", emailVerified: true, groups: ["devs"] },
  { id: "carol", email: "Carol@Example.COM", emailVerified: true, name: "Carol" },
  { id: "unverified", email: "eve@example.com", emailVerified: false },
  { id: "silent", email: "sam@example.com", name: "Sam" },
  { id: "outsider", email: "olga@elsewhere.org", emailVerified: true },
  { id: "nomail", name: "No Mail" },
  // U+212A, the Kelvin sign, in the domain: JavaScript's toLowerCase() makes it kelvin.example.
  { id: "kelvin", email: "kim@\u212Aelvin.example", emailVerified: true },
  { id: "two-ats", email: "a@b@example.com", emailVerified: true },
];

/** Asserts that `promise` fails with an OidcError of `code`; answers it. */
async function refused(promise: Promise<unknown>, code: OidcErrorCode): Promise<OidcError> {
  const error = await promise.then(
    () => assert.fail(`expected ${code}, but it succeeded`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof OidcError, `expected an OidcError, got ${String(error)}`);
  assert.equal(error.code, code, error.message);
  return error;
}

describe("OpenID Connect sign-in", () => {
  let provider: OidcTestProvider;
  before(async () => {
    provider = await startOidcProvider({ accounts: ACCOUNTS, clients: [CLIENT] });
  });
  after(() => provider.close());

  const settings = (more: Partial<OidcSettings> = {}): OidcSettings => ({
    issuer: provider.issuer,
    clientId: CLIENT.clientId,
    clientSecret: CLIENT.clientSecret,
    redirectUri: REDIRECT_URI,
    allowedDomains: [],
    adminValues: [],
    ...more,
  });

  /** Discovers, begins, signs `accountId` in at the provider; answers the attempt and the callback URL. */
  async function attempt(accountId: string, more: Partial<OidcSettings> = {}) {
    const signIn = await OidcSignIn.discover(settings(more));
    const started = await signIn.begin();
    const callback = await signInAt(provider, started.url, accountId);
    return { signIn, started, callback };
  }

  async function identityOf(accountId: string, more: Partial<OidcSettings> = {}) {
    const { signIn, started, callback } = await attempt(accountId, more);
    return signIn.finish(callback, started);
  }

  test("the authorization URL asks for the code with PKCE (S256), state, nonce and the three scopes", async () => {
    const signIn = await OidcSignIn.discover(settings());
    const started = await signIn.begin();
    const url = new URL(started.url);
    assert.equal(`${url.origin}${url.pathname}`, `${provider.issuer}/auth`);
    const query = Object.fromEntries(url.searchParams);
    assert.equal(query.response_type, "code");
    assert.equal(query.client_id, CLIENT.clientId);
    assert.equal(query.redirect_uri, REDIRECT_URI);
    assert.equal(query.scope, "openid email profile");
    assert.equal(query.code_challenge_method, "S256");
    assert.equal(query.state, started.state);
    assert.equal(query.nonce, started.nonce);
    assert.ok(query.code_challenge && query.code_challenge !== started.codeVerifier);
    const again = await signIn.begin();
    assert.notEqual(again.state, started.state, "every attempt has its own state");
    assert.notEqual(again.nonce, started.nonce);
    assert.notEqual(again.codeVerifier, started.codeVerifier);
  });

  test("a verified e-mail signs in: subject, e-mail, name, and admin from the role claim", async () => {
    const roles = { roleClaim: "groups", adminValues: ["flagstaff-admins"] };
    assert.deepEqual(await identityOf("ada", roles), {
      subject: "ada",
      email: "ada@example.com",
      name: "Ada Lovelace",
      admin: true,
    });
    // Without a name the e-mail stands in; a list without an admin value makes a member.
    assert.deepEqual(await identityOf("bob", roles), {
      subject: "bob",
      email: "bob@example.com",
      name: "bob@example.com",
      admin: false,
    });
    // Without the claim at all: a member too.
    assert.equal((await identityOf("carol", roles)).admin, false);
    // No role claim configured: the provider says nothing of roles.
    assert.equal((await identityOf("ada")).admin, undefined);
  });

  test("a role claim holding one string counts as a list of one", async () => {
    assert.equal((await identityOf("ada", { roleClaim: "name", adminValues: ["Ada Lovelace"] })).admin, true);
    assert.equal((await identityOf("ada", { roleClaim: "name", adminValues: ["Ada"] })).admin, false);
  });

  test("email_verified false is refused, with or without allowed domains", async () => {
    await refused(identityOf("unverified"), "email_unverified");
    await refused(identityOf("unverified", { allowedDomains: ["example.com"] }), "email_unverified");
  });

  test("without email_verified, the e-mail counts only from an allowed domain", async () => {
    await refused(identityOf("silent"), "email_unverified");
    const identity = await identityOf("silent", { allowedDomains: ["example.com"] });
    assert.equal(identity.email, "sam@example.com");
    assert.equal(identity.name, "Sam");
    await refused(identityOf("silent", { allowedDomains: ["example.org"] }), "domain_not_allowed");
  });

  test("a domain outside the allowed ones is refused; domains compare case-insensitively", async () => {
    const error = await refused(identityOf("outsider", { allowedDomains: ["example.com"] }), "domain_not_allowed");
    assert.match(error.message, /elsewhere\.org/);
    const carol = await identityOf("carol", { allowedDomains: ["EXAMPLE.com", "other.net"] });
    assert.equal(carol.email, "Carol@Example.COM", "the e-mail as the provider spelled it");
    assert.ok(await identityOf("ada", { allowedDomains: ["Example.Com"] }));
  });

  test("domains fold A–Z only: the Kelvin sign is no K, so its domain is not kelvin.example", async () => {
    for (const allowedDomains of [["kelvin.example"], ["KELVIN.example"]]) {
      await refused(identityOf("kelvin", { allowedDomains }), "domain_not_allowed");
    }
    assert.equal((await identityOf("kelvin")).email, "kim@\u212Aelvin.example", "any domain: the address as it is");
  });

  test("an e-mail POST /users would refuse is refused (email_invalid), before its domain is looked at", async () => {
    await refused(identityOf("two-ats"), "email_invalid");
    await refused(identityOf("two-ats", { allowedDomains: ["example.com"] }), "email_invalid");
  });

  test("no e-mail at all is refused", async () => {
    await refused(identityOf("nomail"), "email_missing");
  });

  test("a tampered state is refused before the code is spent", async () => {
    const { signIn, started, callback } = await attempt("ada");
    const tampered = new URL(callback);
    tampered.searchParams.set("state", `${started.state}x`);
    await refused(signIn.finish(tampered, started), "state_mismatch");
    // The state of another attempt (the browser's callback after a second login started).
    await refused(signIn.finish(callback, { ...started, state: (await signIn.begin()).state }), "state_mismatch");
    const missing = new URL(callback);
    missing.searchParams.delete("state");
    await refused(signIn.finish(missing, started), "state_mismatch");
    // The code was never sent to the token endpoint: the real callback still works.
    assert.equal((await signIn.finish(callback, started)).subject, "ada");
  });

  test("a replayed code is refused, and no message carries the code", async () => {
    const { signIn, started, callback } = await attempt("ada");
    assert.equal((await signIn.finish(callback, started)).subject, "ada");
    const error = await refused(signIn.finish(callback, started), "code_rejected");
    assert.match(error.message, /invalid_grant/);
    const code = callback.searchParams.get("code");
    assert.ok(code);
    assert.ok(!error.message.includes(code), error.message);
    assert.ok(!error.message.includes(CLIENT.clientSecret));
  });

  test("a wrong PKCE verifier, and a wrong client secret, get the code refused", async () => {
    const first = await attempt("ada");
    const other = await first.signIn.begin();
    await refused(
      first.signIn.finish(first.callback, { ...first.started, codeVerifier: other.codeVerifier }),
      "code_rejected",
    );
    const second = await attempt("ada", { clientSecret: "not-the-secret" });
    const error = await refused(second.signIn.finish(second.callback, second.started), "code_rejected");
    assert.match(error.message, /invalid_client/);
    assert.ok(!error.message.includes("not-the-secret"), error.message);
  });

  test("an ID token with another attempt's nonce is refused", async () => {
    const { signIn, started, callback } = await attempt("ada");
    const other = await signIn.begin();
    const error = await refused(signIn.finish(callback, { ...started, nonce: other.nonce }), "token_invalid");
    assert.match(error.message, /nonce/);
  });

  test("the provider's error redirect (the person cancelled) is provider_error", async () => {
    const signIn = await OidcSignIn.discover(settings());
    const started = await signIn.begin();
    const callback = await cancelSignInAt(provider, started.url);
    assert.equal(callback.searchParams.get("error"), "access_denied");
    const error = await refused(signIn.finish(callback, started), "provider_error");
    assert.match(error.message, /access_denied/);
    // An error= with a foreign state is a forgery: it is the state that is refused.
    await refused(signIn.finish(callback, { ...started, state: "another" }), "state_mismatch");
  });

  test("an issuer nobody answers at is provider_unreachable", async () => {
    const port = await freePort();
    const error = await refused(
      OidcSignIn.discover(settings({ issuer: `http://127.0.0.1:${port}` })),
      "provider_unreachable",
    );
    assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  });

  test("plain HTTP is refused for an issuer that is not this machine, before any request", async () => {
    for (const issuer of ["http://idp.example.com", "http://10.0.0.1:8080/realms/acme"]) {
      const error = await refused(OidcSignIn.discover(settings({ issuer })), "provider_unreachable");
      assert.match(error.message, /https/);
    }
    await refused(OidcSignIn.discover(settings({ issuer: "not a url" })), "provider_unreachable");
    // The discovery document's own URL would make openid-client skip the issuer check.
    await refused(
      OidcSignIn.discover(settings({ issuer: `${provider.issuer}/.well-known/openid-configuration` })),
      "provider_unreachable",
    );
    // localhost is loopback too: it reaches the same provider, whose issuer is 127.0.0.1, and the
    // discovery document's issuer must match the one configured.
    const mismatch = await refused(
      OidcSignIn.discover(settings({ issuer: provider.issuer.replace("127.0.0.1", "localhost") })),
      "provider_unreachable",
    );
    assert.match(mismatch.message, /issuer does not match/);
  });
});

describe("OpenID Connect sign-in, claims at userinfo only", () => {
  let provider: OidcTestProvider;
  before(async () => {
    provider = await startOidcProvider({ accounts: ACCOUNTS, clients: [CLIENT], claimsInIdToken: false });
  });
  after(() => provider.close());

  test("the e-mail, name and roles come from userinfo when the ID token lacks them", async () => {
    const signIn = await OidcSignIn.discover({
      issuer: provider.issuer,
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.clientSecret,
      redirectUri: REDIRECT_URI,
      allowedDomains: [],
      roleClaim: "groups",
      adminValues: ["flagstaff-admins"],
    });
    const started = await signIn.begin();
    const callback = await signInAt(provider, started.url, "ada");
    assert.deepEqual(await signIn.finish(callback, started), {
      subject: "ada",
      email: "ada@example.com",
      name: "Ada Lovelace",
      admin: true,
    });
  });
});

describe("OpenID Connect sign-in in a browser", { skip: browserSkip }, () => {
  let provider: OidcTestProvider;
  let flagstaff: WebhookReceiver;
  let redirectUri: string;
  let browser: Browser | undefined;
  before(async () => {
    // Stands in for Flagstaff's callback, which a browser must really reach: Playwright's routes do not
    // see the targets of redirects.
    flagstaff = await WebhookReceiver.start();
    redirectUri = `${flagstaff.url}/auth/oidc/callback`;
    provider = await startOidcProvider({ accounts: ACCOUNTS, clients: [{ ...CLIENT, redirectUris: [redirectUri] }] });
    browser = await launchChromium();
  });
  after(async () => {
    await closeBrowser(browser);
    await provider.close();
    await flagstaff.close();
  });

  test("signInInBrowser fills the provider's login and consent pages", async () => {
    assert.ok(browser);
    const signIn = await OidcSignIn.discover({
      issuer: provider.issuer,
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.clientSecret,
      redirectUri,
      allowedDomains: ["example.com"],
      adminValues: [],
    });
    const started = await signIn.begin();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(started.url);
      await signInInBrowser(page, "ada");
      const callback = new URL(page.url());
      assert.equal(`${callback.origin}${callback.pathname}`, redirectUri);
      assert.equal(flagstaff.at(`${callback.pathname}${callback.search}`).length, 1, "the browser arrived there");
      assert.equal((await signIn.finish(callback, started)).email, "ada@example.com");
    } finally {
      await context.close();
    }
  });
});
