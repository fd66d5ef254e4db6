import { Fragment, type ReactElement, useEffect, useMemo, useRef, useState } from "react";
import type { Environment } from "@flagstaff/sdk";
import {
  chooseEnvironment,
  rememberedEnvironment,
  rememberEnvironment,
  visibleEnvironments,
} from "./api/environments.js";
import {
  type Connection,
  connect,
  loadSession,
  maskKey,
  type Observer,
  type Session,
  saveSession,
  signIn,
} from "./api/session.js";
import { EnvironmentSwitcher } from "./environment-switcher.js";
import { ActorsPage } from "./pages/actors.js";
import { FlagPage } from "./pages/flag.js";
import { FlagsPage } from "./pages/flags.js";
import { HistoryPage } from "./pages/history.js";
import { KeysPage } from "./pages/keys.js";
import { ProjectsPage } from "./pages/projects.js";
import { SegmentPage, SegmentsPage } from "./pages/segments.js";
import { WebhooksPage } from "./pages/webhooks.js";
import { Ctx, currentPath, ErrorText, enc, Link, Loading, navigate, useData, usePath } from "./ui.js";
import { useUrlQuery } from "./url-state.js";

/** The page to open after sign-in when the tab was opened on one (a deep link), or undefined for "/". */
function returnTo(path: string): string | undefined {
  if (path === "/" || path === "") return undefined;
  return `${path}${window.location.search}${window.location.hash}`;
}

interface Route {
  parts: string[];
  project: string | undefined;
  /** A project key opened on another project's link. */
  elsewhere: boolean;
  section: string | undefined;
  item: string | undefined;
}

/** Routes: /projects, /p/{project}/{section}[/{item}] */
function parseRoute(path: string, session: Session | undefined): Route {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  let project = session?.project;
  if (parts[0] === "p" && parts[1]) project = session?.role === "admin" ? parts[1] : session?.project;
  // A project key opened on another project's link: say so, rather than show its own project's page of
  // the same name (a flag "checkout" exists in many projects).
  const elsewhere = Boolean(parts[0] === "p" && parts[1] && session?.role !== "admin" && parts[1] !== session?.project);
  const section = parts[0] === "p" ? (parts[2] ?? "flags") : parts[0] === "projects" ? "projects" : undefined;
  const item = parts[0] === "p" ? parts[3] : undefined;
  return { parts, project, elsewhere, section, item };
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

  const observer = useMemo<Observer>(
    () => ({
      unauthorized: () =>
        signOutRef.current("You were signed out: the server refused the key (401). It may have been revoked."),
      unavailable: (reason) => setOutage(reason),
      answered: () => setOutage(undefined),
    }),
    [],
  );
  const route = parseRoute(path, session);

  // The project's environments, and the one shown: the URL's, else the one remembered, else the default.
  const base = useMemo(() => (session ? connect(session.key, observer) : undefined), [session?.key]);
  const [query, setQuery] = useUrlQuery();
  const envProject = route.section !== "projects" && !route.elsewhere ? route.project : undefined;
  const environments = useData<Environment[] | undefined>(
    // At most 20 a project (ENVIRONMENTS_MAX_PER_PROJECT): one page.
    async () => (base && envProject ? base.client.environments.list(envProject, { limit: 100 }).toArray() : undefined),
    // Polled like every page (at most 20 rows): an environment added or deleted meanwhile appears or goes.
    [session?.key, envProject],
  );
  const visible = environments.data && visibleEnvironments(environments.data, session?.environment);
  const named = query.get("environment");
  const selected =
    visible && envProject ? chooseEnvironment(visible, named, rememberedEnvironment(envProject)) : undefined;
  useEffect(() => {
    if (!envProject || !selected || named === null) return;
    // A link that names an environment opens it, and the pages opened from there stay in it; one this key
    // may not see (or that is gone) leaves the URL, which then says what is shown.
    if (named === selected.id) rememberEnvironment(envProject, selected.id);
    else setQuery({ environment: undefined });
  }, [envProject, selected?.id, named]);
  const conn = useMemo<Connection | undefined>(
    () => (session ? connect(session.key, observer, selected?.id) : undefined),
    [session?.key, selected?.id],
  );

  useEffect(() => {
    // A session saved before keys had environments does not know the key's: ask once.
    if (!session || session.environment !== undefined || !base) return;
    void base.client
      .whoami()
      .then((me) => {
        const next = { ...session, environment: me.environment };
        saveSession(next);
        setSession(next);
      })
      .catch(() => {});
  }, [session?.key, session?.environment]);

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

  const { parts, project, elsewhere, section, item } = route;

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
  const ctx = {
    session,
    conn,
    project: project ?? "",
    canWrite: session.role !== "read",
    isAdmin,
    environment: selected,
    environments: visible ?? [],
    selectEnvironment: (id: string) => {
      if (!project) return;
      rememberEnvironment(project, id);
      setQuery({ environment: id });
    },
  };
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
  else if (!selected) {
    // Every project page acts on an environment: none is shown before the project's are known.
    page = environments.error ? <ErrorText error={environments.error} /> : <Loading what="the environments" />;
  } else if (section === "flags" && item) page = <FlagPage name={item} />;
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
        {project && selected && visible && !elsewhere && section !== "projects" && (
          <EnvironmentSwitcher
            environments={visible}
            selected={selected}
            bound={Boolean(session.environment)}
            onChange={ctx.selectEnvironment}
          />
        )}
        {/* A page belongs to one environment: switching shows it afresh (its data, its unsaved edits). */}
        <Fragment key={selected?.id ?? ""}>{page}</Fragment>
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
