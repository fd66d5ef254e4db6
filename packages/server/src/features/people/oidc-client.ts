// Single sign-on with OpenID Connect (docs/people.md): the authorization code flow with PKCE (S256), state
// and nonce, through openid-client, which does the protocol (discovery, the token request, the ID token's
// signature, issuer, audience, expiry and nonce). This file only decides who may come in, and turns
// openid-client's many errors into the few reasons the sign-in page can show.
import { isEmail, NAME_MAX_LENGTH, normalizeEmail } from "@flagstaff/core";
import * as client from "openid-client";

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The callback registered at the provider: `PUBLIC_URL/auth/oidc/callback`. */
  redirectUri: string;
  /** E-mail domains that may sign in; empty: any e-mail the provider verified. */
  allowedDomains: readonly string[];
  /** A claim holding a list (or one string) of roles or groups; unset: the provider says nothing of roles. */
  roleClaim?: string;
  adminValues: readonly string[];
}

export interface OidcIdentity {
  subject: string;
  email: string;
  name: string;
  /** Undefined when no role claim is configured; else whether the claim holds one of the admin values. */
  admin: boolean | undefined;
}

export type OidcErrorCode =
  | "provider_unreachable"
  | "state_mismatch"
  | "code_rejected"
  | "token_invalid"
  | "email_missing"
  | "email_invalid"
  | "email_unverified"
  | "domain_not_allowed"
  | "provider_error";

/** Why a sign-in failed. Messages never carry a secret, a code or a token: they end up in logs. */
export class OidcError extends Error {
  override name = "OidcError";
  constructor(
    readonly code: OidcErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface OidcAttempt {
  /** Where to send the browser. */
  url: string;
  /** Keep these three until the callback (they prove the callback answers this attempt). */
  state: string;
  nonce: string;
  codeVerifier: string;
}

const SCOPES = "openid email profile";
// openid-client waits 30 s by default; a person is waiting on the other end of each of these requests.
const TIMEOUT_SECONDS = 10;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

export class OidcSignIn {
  private constructor(
    private readonly config: client.Configuration,
    private readonly settings: OidcSettings,
  ) {}

  /** Reads the provider's discovery document; `provider_unreachable` when it cannot. */
  static async discover(settings: OidcSettings): Promise<OidcSignIn> {
    const issuer = parseIssuer(settings.issuer);
    // Plain HTTP only on this machine (tests, a local trial): anywhere else the code and tokens would
    // cross the network in clear.
    const insecure = issuer.protocol === "http:";
    try {
      const config = await client.discovery(issuer, settings.clientId, undefined, secretAuth(settings.clientSecret), {
        timeout: TIMEOUT_SECONDS,
        execute: insecure ? [client.allowInsecureRequests] : [],
      });
      return new OidcSignIn(config, settings);
    } catch (error) {
      throw new OidcError("provider_unreachable", `Could not discover the provider at ${issuer.href}: ${why(error)}`);
    }
  }

  /** Starts an attempt: fresh state, nonce and PKCE verifier, and the provider's URL to send the browser to. */
  async begin(): Promise<OidcAttempt> {
    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(this.config, {
      redirect_uri: this.settings.redirectUri,
      scope: SCOPES,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    return { url: url.href, state, nonce, codeVerifier };
  }

  /**
   * Completes an attempt from the URL the provider sent the browser back to (only its query is read), and
   * answers who signed in, once the e-mail rule let them in.
   */
  async finish(
    callbackUrl: URL,
    expected: { state: string; nonce: string; codeVerifier: string },
  ): Promise<OidcIdentity> {
    // openid-client checks the state too, but its error does not say which check failed; a foreign or
    // tampered state must be told apart (and wins over an error= the same request may carry).
    if (callbackUrl.searchParams.get("state") !== expected.state) {
      throw new OidcError("state_mismatch", "The sign-in answer does not belong to this attempt (state differs).");
    }
    // The token request must name the registered redirect URI, whatever host or scheme the callback
    // reached us on behind a proxy: openid-client takes it from the URL it is given.
    const current = new URL(this.settings.redirectUri);
    for (const [key, value] of callbackUrl.searchParams) current.searchParams.append(key, value);

    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(this.config, current, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw grantFailure(error);
    }
    const idToken = tokens.claims();
    if (idToken === undefined) throw new OidcError("token_invalid", "The provider sent no ID token.");
    let claims: Record<string, unknown> = idToken;
    // Some providers keep the e-mail out of the ID token and serve it at userinfo only.
    if (typeof idToken.email !== "string" && this.config.serverMetadata().userinfo_endpoint !== undefined) {
      try {
        // The subject check makes sure userinfo speaks of the person the ID token named.
        claims = { ...(await client.fetchUserInfo(this.config, tokens.access_token, idToken.sub)), ...idToken };
      } catch (error) {
        throw isUnreachable(error)
          ? new OidcError("provider_unreachable", `The provider's userinfo could not be reached: ${why(error)}`)
          : new OidcError("token_invalid", `The provider's userinfo was refused: ${why(error)}`);
      }
    }
    return this.identity(idToken.sub, claims);
  }

  private identity(subject: string, claims: Record<string, unknown>): OidcIdentity {
    const { email } = claims;
    if (typeof email !== "string" || email === "") {
      throw new OidcError("email_missing", "The provider did not say which e-mail address signed in.");
    }
    // What POST /users would refuse (two @, white space, control characters, too long) is refused here:
    // single sign-on never adds a person the API could not.
    if (!isEmail(email)) {
      throw new OidcError("email_invalid", "The provider's e-mail address is not one Flagstaff accepts.");
    }
    // Folded as e-mails are (A–Z only): Unicode's lower-casing would let K (the Kelvin sign) pass for k.
    const domain = normalizeEmail(email.slice(email.indexOf("@") + 1));
    const allowed = this.settings.allowedDomains.map(normalizeEmail);
    if (allowed.length > 0 && !allowed.includes(domain)) {
      throw new OidcError("domain_not_allowed", `E-mail addresses at ${domain} may not sign in here.`);
    }
    // Without email_verified (Entra ID's work accounts), the address is taken only from a domain the
    // operator named: the provider then vouches for its own domain. Any other value than true refuses.
    const verified = claims.email_verified === true || (claims.email_verified === undefined && allowed.length > 0);
    if (!verified) {
      throw new OidcError("email_unverified", "The provider has not verified this e-mail address.");
    }
    const name = [claims.name, claims.preferred_username, email]
      .map((v) => (typeof v === "string" ? personName(v) : ""))
      .find((v) => v !== "");
    return { subject, email, name: name ?? email, admin: this.isAdmin(claims) };
  }

  private isAdmin(claims: Record<string, unknown>): boolean | undefined {
    if (this.settings.roleClaim === undefined) return undefined;
    const value = claims[this.settings.roleClaim];
    const held = Array.isArray(value) ? value : [value];
    return held.some((v) => typeof v === "string" && this.settings.adminValues.includes(v));
  }
}

/**
 * A provider's name for a person as POST /users would take one: without control characters or lone
 * surrogates, trimmed, at most NAME_MAX_LENGTH characters (code points); "" when nothing is left.
 */
function personName(value: string): string {
  const characters = [...value.replace(/[\p{Cc}\p{Cs}]/gu, "").trim()];
  return characters.slice(0, NAME_MAX_LENGTH).join("").trim();
}

function parseIssuer(issuer: string): URL {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new OidcError("provider_unreachable", `The issuer "${issuer}" is not a URL.`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new OidcError(
      "provider_unreachable",
      `The issuer must be https:// (plain http only on 127.0.0.1, ::1 or localhost): ${url.href}`,
    );
  }
  // openid-client skips the issuer check when handed the discovery document's own URL.
  if (url.pathname.includes("/.well-known/")) {
    throw new OidcError(
      "provider_unreachable",
      `The issuer is the provider's base URL, not its discovery document: ${url.href}`,
    );
  }
  return url;
}

/**
 * client_secret_basic, the method every provider must support when its metadata names none, unless the
 * provider lists only client_secret_post (openid-client's default is post, which some providers refuse).
 */
function secretAuth(secret: string): client.ClientAuth {
  const basic = client.ClientSecretBasic(secret);
  const post = client.ClientSecretPost(secret);
  return (as, c, body, headers) => {
    const methods = as.token_endpoint_auth_methods_supported;
    const usePost =
      methods !== undefined && !methods.includes("client_secret_basic") && methods.includes("client_secret_post");
    return (usePost ? post : basic)(as, c, body, headers);
  };
}

/** Network failures and timeouts: the provider did not answer at all. */
function isUnreachable(error: unknown): boolean {
  if (error instanceof client.ClientError) return error.code === "OAUTH_TIMEOUT" || error.code === "OAUTH_ABORT";
  // fetch's own failure (refused, reset, DNS); openid-client passes TypeErrors through untouched.
  return error instanceof TypeError;
}

function grantFailure(error: unknown): OidcError {
  if (error instanceof client.AuthorizationResponseError) {
    return new OidcError(
      "provider_error",
      `The provider refused the sign-in: ${providerWords(error.error, error.error_description)}`,
    );
  }
  // The token endpoint said no: the code is invalid, used already or expired, or the verifier is wrong.
  if (error instanceof client.ResponseBodyError) {
    return new OidcError(
      "code_rejected",
      `The provider refused the code: ${providerWords(error.error, error.error_description)}`,
    );
  }
  // The same refusal carried in a WWW-Authenticate header (client authentication failed).
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const said = error.cause[0]?.parameters;
    const words = providerWords(said?.error ?? `HTTP ${error.status}`, said?.error_description);
    return new OidcError("code_rejected", `The provider refused the code: ${words}`);
  }
  if (isUnreachable(error))
    return new OidcError("provider_unreachable", `The provider could not be reached: ${why(error)}`);
  if (
    error instanceof client.ClientError &&
    (error.code === "OAUTH_RESPONSE_IS_NOT_CONFORM" || error.code === "OAUTH_RESPONSE_IS_NOT_JSON")
  ) {
    return new OidcError("code_rejected", `The provider's token endpoint answered unexpectedly: ${why(error)}`);
  }
  // Everything else is the answer failing a check: nonce, signature, issuer, audience, expiry.
  return new OidcError("token_invalid", `The provider's answer failed validation: ${why(error)}`);
}

/** The provider's own error code and description (its words, never a token), kept short. */
function providerWords(code: string, description: string | undefined): string {
  return (description ? `${code} (${description})` : code).slice(0, 300);
}

/**
 * A reason fit for a log. openid-client wraps oauth4webapi's errors, whose messages are fixed texts (the
 * values compared ride in their cause, never in the message); fetch's TypeError has the socket error as cause.
 */
function why(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner = error.cause instanceof Error ? error.cause.message : undefined;
  return inner && inner !== error.message ? `${error.message}: ${inner}` : error.message;
}
