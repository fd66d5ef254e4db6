import { type ReactElement, useEffect, useMemo, useRef, useState } from "react";
import { type Connection, connect, loadSession, maskKey, type Session, saveSession, signIn } from "./api/session.js";
import { ActorsPage } from "./pages/actors.js";
import { FlagPage } from "./pages/flag.js";
import { FlagsPage } from "./pages/flags.js";
import { HistoryPage } from "./pages/history.js";
import { KeysPage } from "./pages/keys.js";
import { ProjectsPage } from "./pages/projects.js";
import { SegmentPage, SegmentsPage } from "./pages/segments.js";
import { WebhooksPage } from "./pages/webhooks.js";
import { Ctx, currentPath, ErrorText, enc, Link, navigate, usePath } from "./ui.js";

/** The page to open after sign-in when the tab was opened on one (a deep link), or undefined for "/". */
function returnTo(path: string): string | undefined {
  if (path === "/" || path === "") return undefined;
  return `${path}${window.location.search}${window.location.hash}`;
}

export function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [outage, setOutage] = useState<string | undefined>(undefined);
  const path = usePath();

  const signOut = (message?: string) => {
    saveSession(undefined);
    setSession(undefined);
    setNotice(message);
    navigate("/", true);
  };
  const signOutRef = useRef(signOut);
  signOutRef.current = signOut;

  const conn = useMemo<Connection | undefined>(
    () =>
      session
        ? connect(session.key, {
            unauthorized: () =>
              signOutRef.current("You were signed out: the server refused the key (401). It may have been revoked."),
            unavailable: (reason) => setOutage(reason),
            answered: () => setOutage(undefined),
          })
        : undefined,
    [session?.key],
  );

  useEffect(() => {
    document.title = session ? `Flagstaff console — ${session.project ?? "projects"}` : "Sign in — Flagstaff console";
  }, [session]);

  if (!session || !conn) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          saveSession(s);
          setNotice(undefined);
          setSession(s);
          // A link opened in a new tab (its session storage is empty) asked for sign-in: go back to it.
          navigate(returnTo(currentPath()) ?? (s.project ? `/p/${enc(s.project)}/flags` : "/projects"), true);
        }}
      />
    );
  }

  // Routes: /projects, /p/{project}/{section}[/{item}]
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  let project = session.project;
  if (parts[0] === "p" && parts[1]) project = session.role === "admin" ? parts[1] : session.project;
  // A project key opened on another project's link: say so, rather than show its own project's page of
  // the same name (a flag "checkout" exists in many projects).
  const elsewhere = parts[0] === "p" && parts[1] && session.role !== "admin" && parts[1] !== session.project;
  const section = parts[0] === "p" ? (parts[2] ?? "flags") : parts[0] === "projects" ? "projects" : undefined;
  const item = parts[0] === "p" ? parts[3] : undefined;

  if (section === undefined) {
    // "/" or anything unknown: the key's project, or the project list for admins.
    queueMicrotask(() => navigate(project ? `/p/${enc(project)}/flags` : "/projects", true));
    return null;
  }
  if (session.role === "admin" && project !== session.project && project !== undefined) {
    const next = { ...session, project };
    saveSession(next);
    queueMicrotask(() => setSession(next));
  }

  const isAdmin = session.role === "admin";
  const ctx = { session, conn, project: project ?? "", canWrite: session.role !== "read", isAdmin };
  const nav: [string, string, boolean][] = project
    ? [
        ["flags", "Flags", true],
        ["segments", "Segments", true],
        ["actors", "Actors", true],
        ["history", "History", true],
        ["keys", "Keys", isAdmin],
        ["webhooks", "Webhooks", isAdmin],
      ]
    : [];

  let page: ReactElement;
  if (elsewhere) {
    page = (
      <section aria-labelledby="elsewhere-title">
        <h1 id="elsewhere-title">Another project</h1>
        <p role="alert">
          This key belongs to project {session.project} and cannot see {parts[1]}. Sign in with a key of {parts[1]} or
          an admin key to open this link.
        </p>
        <p>
          <Link to={`/p/${enc(session.project ?? "")}/flags`}>Open {session.project}</Link>
        </p>
      </section>
    );
  } else if (section === "projects" && isAdmin) page = <ProjectsPage />;
  else if (!project) page = <p>Choose a project.</p>;
  else if (section === "flags" && item) page = <FlagPage name={item} />;
  else if (section === "flags") page = <FlagsPage />;
  else if (section === "segments" && item) page = <SegmentPage id={item} />;
  else if (section === "segments") page = <SegmentsPage />;
  else if (section === "actors") page = <ActorsPage actorId={item} />;
  else if (section === "history") page = <HistoryPage />;
  else if (section === "keys" && isAdmin) page = <KeysPage />;
  else if (section === "webhooks" && isAdmin) page = <WebhooksPage />;
  else page = <p role="alert">This page needs an admin key.</p>;

  return (
    <Ctx.Provider value={ctx}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <div className="brand">
          <Link to={isAdmin ? "/projects" : `/p/${enc(project ?? "")}/flags`}>Flagstaff</Link>
        </div>
        <nav aria-label="Sections">
          <ul>
            {isAdmin && (
              <li>
                <Link to="/projects" current={section === "projects"}>
                  Projects
                </Link>
              </li>
            )}
            {nav
              .filter(([, , shown]) => shown)
              .map(([id, label]) => (
                <li key={id}>
                  <Link to={`/p/${enc(project ?? "")}/${id}`} current={section === id}>
                    {label}
                  </Link>
                </li>
              ))}
          </ul>
        </nav>
        <div className="who">
          {project && (
            <span>
              Project <strong>{project}</strong>
            </span>
          )}
          <span data-testid="signed-in" className="signed-in">
            <span className="key" title={session.name}>
              Key <code>{maskKey(session.key)}</code>
              {session.name ? ` (${session.name})` : ""}
            </span>
            <span>
              · role <strong>{session.role}</strong>
            </span>
          </span>
          <button type="button" onClick={() => signOut()}>
            Sign out
          </button>
        </div>
      </header>
      {outage && (
        <div className="banner" role="alert">
          {outage} Retrying every few seconds…
        </div>
      )}
      {session.role === "read" && section !== "projects" && (
        <p className="readonly-note" role="note">
          Read-only: this key has the read role, so every change is disabled.
        </p>
      )}
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </Ctx.Provider>
  );
}

function SignIn(props: { notice: string | undefined; onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" className="signin">
      <h1>Flagstaff console</h1>
      {props.notice && (
        <p className="notice" role="status">
          {props.notice}
        </p>
      )}
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            props.onSignedIn(await signIn(key.trim()));
          } catch (e) {
            setError(e);
          } finally {
            setBusy(false);
          }
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
            An admin, write or read key; a project key opens its own project. It is kept in this tab only (session
            storage) until you sign out.
          </span>
        </p>
        <ErrorText error={error} />
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
