// The sign-in page: what `GET /auth/methods` offers (single sign-on, an e-mail and a password), and an API
// key for automation accounts and the first start. Either way it ends with `GET /whoami`.
import { type AuthMethods, isFlagstaffError } from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import { connect, resumeSession, type Session, signIn } from "../api/session.js";
import { BASE, currentPath, ErrorText, useAction } from "../ui.js";

/** Why single sign-on sent the browser back (`?signInError=<code>`), in words. */
const SSO_ERRORS: Record<string, string> = {
  // The codes of the server's OpenID Connect client (packages/server/src/features/people/oidc-client.ts).
  provider_unreachable: "The identity provider cannot be reached. Try again later, or tell an admin.",
  provider_error: "The identity provider refused the sign-in, or it was cancelled there.",
  state_mismatch: "The sign-in could not be checked (it was tampered with, or started in another tab). Try again.",
  code_rejected: "The identity provider refused the sign-in (it was used already, or took too long). Try again.",
  token_invalid: "The identity provider's answer could not be checked. Try again, or tell an admin.",
  email_missing: "The identity provider did not say your e-mail address.",
  email_invalid: "The identity provider's e-mail address for you is not one Flagstaff accepts. Ask an admin.",
  email_unverified: "The identity provider has not verified your e-mail address, so Flagstaff cannot trust it.",
  domain_not_allowed: "Your e-mail address's domain may not sign in to this Flagstaff. Ask an admin.",
  // The server's own, around it.
  account_disabled: "Your account is disabled. Ask an admin.",
  attempt_expired: "This sign-in was used already, or took more than 10 minutes. Try again.",
  link_invalid:
    "This sign-in link is not valid: it was used already, or is more than 24 hours old. Ask an admin for a new one.",
};

export function ssoErrorText(code: string): string {
  return (
    SSO_ERRORS[code] ?? `Single sign-on failed (${code}). Try again, or sign in another way and tell an admin the code.`
  );
}

/** The page to come back to after single sign-on: where the person is now, without the error of a last attempt. */
function returnPath(): string {
  const query = new URLSearchParams(window.location.search);
  query.delete("signInError");
  const qs = query.toString();
  return `${BASE}${currentPath()}${qs ? `?${qs}` : ""}`;
}

/** A wait in words: "45 seconds", "2 minutes". */
function waitText(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

/** The password form's problems as people read them (the server never says which e-mails exist). */
function passwordError(error: unknown): unknown {
  if (!isFlagstaffError(error)) return error;
  if (error.code === "invalid_credentials") return new Error("Wrong e-mail or password.");
  if (error.code === "too_many_attempts") {
    const wait = error.retryAfterSeconds;
    return new Error(
      typeof wait === "number"
        ? `Too many failed attempts: wait ${waitText(wait)}, then try again.`
        : "Too many failed attempts: wait a few minutes, then try again.",
    );
  }
  return error;
}

export function SignIn(props: {
  notice: string | undefined;
  /** Open on the key form (after a key's sign-out, say). */
  preferKey: boolean;
  onSignedIn: (session: Session) => void;
}) {
  const [methods, setMethods] = useState<AuthMethods | "none" | undefined>(undefined);
  const [withKey, setWithKey] = useState(props.preferKey);
  // The code single sign-on came back with: shown once, then dropped from the URL (a reload is a fresh start).
  const [ssoError] = useState(() => new URLSearchParams(window.location.search).get("signInError"));
  useEffect(() => {
    if (ssoError === null) return;
    const query = new URLSearchParams(window.location.search);
    query.delete("signInError");
    const qs = query.toString();
    window.history.replaceState(null, "", `${window.location.pathname}${qs ? `?${qs}` : ""}`);
  }, []);
  useEffect(() => {
    // A server without people (or that cannot answer) offers keys only.
    connect(undefined)
      .client.auth.methods()
      .then((m) => setMethods(m.password || m.oidc ? m : "none"))
      .catch(() => setMethods("none"));
  }, []);
  const offered = methods !== undefined && methods !== "none" ? methods : undefined;
  const showKey = withKey || methods === "none";
  return (
    <main id="main" className="signin">
      <h1>Flagstaff console</h1>
      {props.notice && (
        <p className="notice" role="status">
          {props.notice}
        </p>
      )}
      {ssoError !== null && (
        <p className="error" role="alert">
          {ssoErrorText(ssoError)}
        </p>
      )}
      {methods === undefined && !withKey && (
        <p className="muted" aria-live="polite">
          Loading the ways to sign in…
        </p>
      )}
      {offered && !showKey && (
        <>
          {offered.oidc && (
            <p>
              <a className="button primary wide" href={`/auth/oidc/login?returnTo=${encodeURIComponent(returnPath())}`}>
                Sign in with {offered.oidc.name}
              </a>
            </p>
          )}
          {offered.oidc && offered.password && <p className="or">or</p>}
          {offered.password && <PasswordForm onSignedIn={props.onSignedIn} />}
          <p>
            <button type="button" className="link" onClick={() => setWithKey(true)}>
              Use an API key
            </button>
            <span className="help">For automation accounts, and for the first start with the admin key.</span>
          </p>
        </>
      )}
      {showKey && (
        <>
          <KeyForm onSignedIn={props.onSignedIn} />
          {offered && (
            <p>
              <button type="button" className="link" onClick={() => setWithKey(false)}>
                Use your account instead
              </button>
            </p>
          )}
        </>
      )}
    </main>
  );
}

function PasswordForm(props: { onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const action = useAction();
  return (
    <form
      onSubmit={async (event) => {
        event.preventDefault();
        await action.run(async () => {
          try {
            await connect(undefined).client.auth.login(email.trim(), password);
            // The cookie is set: whoami names the person and their grants.
            const session = await resumeSession();
            if (!session) throw new Error("Signed in, but the server does not recognise the session. Try again.");
            props.onSignedIn(session);
          } catch (e) {
            setPassword("");
            throw passwordError(e);
          }
        });
      }}
    >
      <p>
        <label htmlFor="signin-email">E-mail</label>
        <input
          id="signin-email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
      </p>
      <p>
        <label htmlFor="signin-password">Password</label>
        <input
          id="signin-password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </p>
      <ErrorText error={action.error} />
      <button type="submit" className="primary" disabled={action.busy}>
        Sign in
      </button>
    </form>
  );
}

function KeyForm(props: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState("");
  const action = useAction();
  return (
    <form
      onSubmit={async (event) => {
        event.preventDefault();
        await action.run(async () => props.onSignedIn(await signIn(key.trim())));
      }}
    >
      <p>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          value={key}
          onChange={(e) => setKey(e.target.value)}
          aria-describedby="api-key-help"
        />
        <span id="api-key-help" className="help">
          An admin, write or read key, or a personal key; a project key opens its own project. It is kept in this tab
          only (session storage) until you sign out.
        </span>
      </p>
      <ErrorText error={action.error} />
      <button type="submit" className="primary" disabled={action.busy}>
        Sign in
      </button>
    </form>
  );
}
