// A real OpenID Connect provider (oidc-provider) on 127.0.0.1, for single sign-on tests: the same
// discovery, login, consent, token and ID token checks a real identity provider does, with accounts and
// clients given by the test. Its login page is oidc-provider's development one (devInteractions): any
// password, the account id as login. Tracked: closed when the test file ends.
import { generateKeyPair, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import Provider, { type Configuration } from "oidc-provider";
import type { Page } from "playwright-core";
import { track } from "./cleanup.js";

export interface OidcTestAccount {
  /** The login typed at the provider, and the ID token's `sub`. */
  id: string;
  /** Omitted: the provider sends no e-mail at all. */
  email?: string;
  /** Omitted: the provider sends no `email_verified` claim (as Entra ID does for work accounts). */
  emailVerified?: boolean;
  name?: string;
  groups?: string[];
}

export interface OidcTestClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface OidcProviderOptions {
  accounts: OidcTestAccount[];
  clients: OidcTestClient[];
  /** False: the claims are served at userinfo only, not in the ID token (default true). */
  claimsInIdToken?: boolean;
}

export interface OidcTestProvider {
  /** The issuer URL, http://127.0.0.1:PORT (a loopback address, so clients allow plain HTTP). */
  readonly issuer: string;
  readonly accounts: readonly OidcTestAccount[];
  readonly clients: readonly OidcTestClient[];
  close(): Promise<void>;
}

const generateKeyPairAsync = promisify(generateKeyPair);

/** Starts a provider on a free port of 127.0.0.1. */
export async function startOidcProvider(options: OidcProviderOptions): Promise<OidcTestProvider> {
  // The issuer names the port, and the provider needs the issuer: listen first, hand requests over after.
  let handle: (request: IncomingMessage, response: ServerResponse) => void = (_, response) => {
    response.writeHead(503).end();
  };
  const server = createServer((request, response) => handle(request, response));
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
    return closing;
  };
  const untrack = track({ label: "OpenID provider", dispose: close });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // A signing key of its own: the provider's built-in development key would print a warning at every start.
  const { privateKey } = await generateKeyPairAsync("rsa", { modulusLength: 2048 });
  const accounts = new Map(options.accounts.map((account) => [account.id, account]));
  const configuration: Configuration = {
    clients: options.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
    })),
    findAccount: (_ctx, id) => {
      const account = accounts.get(id);
      if (account === undefined) return undefined;
      return {
        accountId: id,
        // Only the claims the account has: an absent email_verified must stay absent, not undefined.
        claims: () => ({
          sub: id,
          ...(account.email !== undefined && { email: account.email }),
          ...(account.emailVerified !== undefined && { email_verified: account.emailVerified }),
          ...(account.name !== undefined && { name: account.name }),
          ...(account.groups !== undefined && { groups: account.groups }),
        }),
      };
    },
    // groups rides the profile scope: Flagstaff asks for openid email profile and nothing else.
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    // By default oidc-provider keeps scope claims out of an ID token issued with an access token (they are
    // at userinfo); real providers (Keycloak, Google, Entra ID) put them in, so this does too.
    conformIdTokenClaims: options.claimsInIdToken === false,
    pkce: { required: () => true },
    // Short-lived: nothing here outlives a test; codes as short as a real provider's.
    ttl: { AuthorizationCode: 60, AccessToken: 600, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: "test", use: "sig", alg: "RS256" }] },
    features: { devInteractions: { enabled: true } },
  };
  const provider = new Provider(issuer, configuration);
  handle = provider.callback();
  return {
    issuer,
    accounts: options.accounts,
    clients: options.clients,
    async close() {
      await close();
      untrack();
    },
  };
}

/**
 * Signs `accountId` in at the provider without a browser: follows the provider's redirects from the
 * authorization URL, fills its login and consent forms, and answers the redirect to the client's
 * redirect URI (not followed), with its `code`, `state` and `iss`, or its `error`.
 */
export async function signInAt(provider: OidcTestProvider, authorizationUrl: string, accountId: string): Promise<URL> {
  if (!provider.accounts.some((account) => account.id === accountId)) {
    throw new Error(`no account "${accountId}" at the provider`);
  }
  return walk(provider, authorizationUrl, (page): PageAction => {
    if (page.includes('name="prompt" value="login"')) return { login: accountId, password: "any" };
    if (page.includes('name="prompt" value="consent"')) return {};
    return undefined;
  });
}

/** Follows the authorization URL to the provider's login page and cancels there: the redirect carries `error=access_denied`. */
export async function cancelSignInAt(provider: OidcTestProvider, authorizationUrl: string): Promise<URL> {
  return walk(provider, authorizationUrl, () => "cancel");
}

type PageAction = Record<string, string> | "cancel" | undefined;

/** The browser's part, with fetch and a cookie jar, until the provider redirects to a client's redirect URI. */
async function walk(provider: OidcTestProvider, start: string, act: (page: string) => PageAction): Promise<URL> {
  const redirectUris = new Set(provider.clients.flatMap((c) => c.redirectUris));
  // The provider's cookies (session, interaction) all live on one host: one jar without paths will do.
  const jar = new Map<string, string>();
  let url = new URL(start);
  let init: RequestInit = {};
  for (let step = 0; step < 20; step++) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), ...(cookie && { cookie }) },
      signal: AbortSignal.timeout(10_000),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      // An expired cookie is the provider deleting it.
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    init = {};
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      url = new URL(location, url);
      if (redirectUris.has(`${url.origin}${url.pathname}`)) return url;
      continue;
    }
    const page = await response.text();
    const action = response.status === 200 ? act(page) : undefined;
    if (action === "cancel") {
      url = new URL(attribute(page, /<a href="([^"]*)">\[ Cancel \]<\/a>/, "the Cancel link"), url);
      continue;
    }
    if (action === undefined) {
      throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${page.slice(0, 500)}`);
    }
    const form = new URLSearchParams({
      prompt: attribute(page, /name="prompt" value="([^"]*)"/, "the prompt"),
      ...action,
    });
    url = new URL(attribute(page, /<form[^>]* action="([^"]*)"/, "the form's action"), url);
    init = {
      method: "POST",
      body: form.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    };
  }
  throw new Error(`the provider never redirected to the client (last at ${url.href})`);
}

function attribute(page: string, pattern: RegExp, what: string): string {
  const found = pattern.exec(page)?.[1];
  if (found === undefined) throw new Error(`no ${what} on the provider's page: ${page.slice(0, 500)}`);
  // The provider's pages escape attribute values as HTML (its html_safe helper); &amp; goes last.
  return found
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");
}

/**
 * Signs `accountId` in through the provider's pages in a browser: `page` is on the provider's login page
 * (where the application sent it). Types the login, then confirms the consent page when the provider
 * shows one, and resolves once the browser has left the provider for the client's redirect URI.
 */
export async function signInInBrowser(page: Page, accountId: string): Promise<void> {
  const provider = new URL(page.url()).origin;
  const loginPath = new URL(page.url()).pathname;
  const left = (url: URL) => url.origin !== provider;
  await page.locator('input[name="login"]').fill(accountId);
  await page.locator('input[name="password"]').fill("any");
  await page.locator('button[type="submit"]').click();
  // Either the consent page (another interaction) or straight back to the client.
  await page.waitForURL(
    (url) => left(url) || (url.pathname.startsWith("/interaction/") && url.pathname !== loginPath),
    {
      waitUntil: "commit",
    },
  );
  if (left(new URL(page.url()))) return;
  await page.locator('form:has(input[name="prompt"][value="consent"]) button[type="submit"]').click();
  await page.waitForURL(left, { waitUntil: "commit" });
}
