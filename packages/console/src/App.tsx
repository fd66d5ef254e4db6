import { Fragment, type ReactElement, useEffect, useMemo, useRef, useState } from "react";
import type { Environment } from "@flagstaff/sdk";
import {
  boundProject,
  isAdmin as isAdminOf,
  listsProjects,
  notProjectAdminReason,
  opensAnyProject,
  READ_ONLY_KEY,
  readOnlyReason,
  roleIn,
} from "./api/access.js";
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
  refreshSession,
  resumeSession,
  type Session,
  saveSession,
} from "./api/session.js";
import { PAGE_MAX } from "./contract.js";
import { EnvironmentSwitcher } from "./environment-switcher.js";
import { AccessPage } from "./pages/access.js";
import { ChangeRequestPage, ChangeRequestsPage } from "./pages/change-requests.js";
import { ActorsPage } from "./pages/actors.js";
import { EnvironmentsPage } from "./pages/environments.js";
import { FlagPage } from "./pages/flag.js";
import { FlagsPage } from "./pages/flags.js";
import { HistoryPage } from "./pages/history.js";
import { KeysPage } from "./pages/keys.js";
import { MePage } from "./pages/me.js";
import { ProjectsPage } from "./pages/projects.js";
import { SegmentPage, SegmentsPage } from "./pages/segments.js";
import { SignIn } from "./pages/sign-in.js";
import { UsersPage } from "./pages/users.js";
import { WebhooksPage } from "./pages/webhooks.js";
import { Ctx, currentPath, ErrorText, enc, Link, Loading, mayLeave, navigate, useData, usePath } from "./ui.js";
import { useUrlQuery } from "./url-state.js";

/** The page to open after sign-in when the tab was opened on one (a deep link), or undefined for "/". */
function returnTo(path: string): string | undefined {
  if (path === "/" || path === "") return undefined;
  return `${path}${window.location.search}${window.location.hash}`;
}

/** Sections that belong to no project. */
const GLOBAL_SECTIONS = ["projects", "users", "me"];

interface Route {
  parts: string[];
  project: string | undefined;
  /** A project key opened on another project's link. */
  elsewhere: boolean;
  section: string | undefined;
  item: string | undefined;
}

/** Routes: /projects, /users, /me, /p/{project}/{section}[/{item}] */
function parseRoute(path: string, session: Session | undefined, lastProject: string | undefined): Route {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const bound = session && boundProject(session);
  const anyProject = session !== undefined && opensAnyProject(session);
  let project = bound ?? (anyProject ? lastProject : undefined);
  if (parts[0] === "p" && parts[1]) project = anyProject ? parts[1] : bound;
  // A project key opened on another project's link: say so, rather than show its own project's page of
  // the same name (a flag "checkout" exists in many projects).
  const elsewhere = Boolean(parts[0] === "p" && parts[1] && !anyProject && parts[1] !== bound);
  const section =
    parts[0] === "p" ? (parts[2] ?? "flags") : GLOBAL_SECTIONS.includes(parts[0] ?? "") ? parts[0] : undefined;
  const item = parts[0] === "p" ? parts[3] : undefined;
  return { parts, project, elsewhere, section, item };
}

/** Where a session starts: its key's project, a member's only project, or the project list. */
function startPage(session: Session): string {
  const bound = boundProject(session);
  if (bound) return `/p/${enc(bound)}/flags`;
  if (session.user && !isAdminOf(session) && session.grants?.length === 1) {
    return `/p/${enc(session.grants[0]!.projectId)}/flags`;
  }
  return listsProjects(session) ? "/projects" : "/me";
}

/** What whoami said of the person, to notice a change worth showing (a grant given or taken away). */
const personPart = (s: Session | undefined) => JSON.stringify([s?.user, s?.grants]);

export function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  // Without a key in this tab, a person may be signed in by the session cookie: whoami says, once at load.
  const [resuming, setResuming] = useState(() => session === undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [preferKey, setPreferKey] = useState(false);
  const [outage, setOutage] = useState<string | undefined>(undefined);
  const [lastProject, setLastProject] = useState<string | undefined>(undefined);
  const path = usePath();

  useEffect(() => {
    if (!resuming) return;
    void resumeSession()
      .then((found) => found && setSession(found))
      .catch(() => {})
      .finally(() => setResuming(false));
  }, []);

  const signOut = (message?: string, ended = false) => {
    const was = session;
    // A person's session ends at the server too (unless it already has: a 401); a key is only forgotten.
    if (was && was.key === undefined && !ended)
      void connect(undefined)
        .client.auth.logout()
        .catch(() => {});
    saveSession(undefined);
    setSession(undefined);
    setLastProject(undefined);
    setNotice(message);
    setPreferKey(was?.key !== undefined);
    navigate("/", true);
  };
  const signOutRef = useRef(signOut);
  signOutRef.current = signOut;
  const sessionRef = useRef(session);
  sessionRef.current = session;

  const observer = useMemo<Observer>(
    () => ({
      unauthorized: () =>
        signOutRef.current(
          sessionRef.current?.key === undefined
            ? "You were signed out: your session ended (it expired, you signed out everywhere, or your account was disabled)."
            : "You were signed out: the server refused the key (401). It may have been revoked.",
          true,
        ),
      unavailable: (reason) => setOutage(reason),
      answered: () => setOutage(undefined),
    }),
    [],
  );
  const route = parseRoute(path, session, lastProject);
  // One value per sign-in, for the connections below: a key, or the person of the cookie.
  const who = session ? (session.key ?? `user:${session.user?.id}`) : undefined;
  const role = session && route.project ? roleIn(session, route.project) : undefined;
  const global = route.section === undefined || GLOBAL_SECTIONS.includes(route.section);
  const inProject = !global && !route.elsewhere && role !== undefined;

  // The project's environments, and the one shown: the URL's, else the one remembered, else the default.
  const base = useMemo(() => (session ? connect(session.key, observer) : undefined), [who]);
  const [query, setQuery] = useUrlQuery();
  const envProject = inProject ? route.project : undefined;
  const environments = useData<Environment[] | undefined>(
    // At most 20 a project (ENVIRONMENTS_MAX_PER_PROJECT): one page.
    async () =>
      base && envProject ? base.client.environments.list(envProject, { limit: PAGE_MAX }).toArray() : undefined,
    // Polled like every page (at most 20 rows): an environment added or deleted meanwhile appears or goes.
    [who, envProject],
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
    [who, selected?.id],
  );

  useEffect(() => {
    // A session saved before keys had environments does not know the key's: ask once.
    if (!session || session.key === undefined || session.environment !== undefined || !base) return;
    void base.client
      .whoami()
      .then((me) => {
        const next = { ...session, environment: me.environment };
        saveSession(next);
        setSession(next);
      })
      .catch(() => {});
  }, [who, session?.environment]);

  useEffect(() => {
    // A person's grants change while they work (given, changed, taken away): whoami again on every page
    // change and now and then, so the pages offer what the server allows now.
    if (!session?.user || !base) return;
    let live = true;
    const refresh = () =>
      void refreshSession(session, base)
        .then((next) => {
          if (!live || personPart(next) === personPart(sessionRef.current)) return;
          saveSession(next);
          setSession(next);
        })
        .catch(() => {});
    refresh();
    const timer = window.setInterval(() => !document.hidden && refresh(), 30_000);
    return () => {
      live = false;
      window.clearInterval(timer);
    };
  }, [who, route.section, route.project]);

  useEffect(() => {
    if (inProject && route.project !== lastProject) setLastProject(route.project);
  }, [inProject, route.project]);

  useEffect(() => {
    document.title = session ? `Flagstaff console — ${route.project ?? "projects"}` : "Sign in — Flagstaff console";
  }, [session, route.project]);

  if (resuming) {
    return (
      <main id="main" className="signin">
        <Loading what="your session" />
      </main>
    );
  }

  if (!session || !conn) {
    return (
      <SignIn
        notice={notice}
        preferKey={preferKey}
        onSignedIn={(s) => {
          saveSession(s);
          setNotice(undefined);
          setSession(s);
          // A link opened in a new tab (its session storage is empty) asked for sign-in: go back to it.
          navigate(returnTo(currentPath()) ?? startPage(s), true);
        }}
      />
    );
  }

  const { parts, project, elsewhere, section, item } = route;

  if (section === undefined) {
    // "/" or anything unknown: the start page.
    queueMicrotask(() => navigate(project && !global ? `/p/${enc(project)}/flags` : startPage(session), true));
    return null;
  }

  const isAdmin = isAdminOf(session);
  const isProjectAdmin = inProject && role === "admin";
  const readOnly = project && inProject ? readOnlyReason(session, project) : undefined;
  const protectedReason =
    selected?.protected && role !== "admin"
      ? `${selected.name} is protected: only admins of this project change its configurations (status, percentages, targeting, attached actors and segments). The description and the variants stay yours to change.`
      : undefined;
  const ctx = {
    session,
    conn,
    project: project ?? "",
    canWrite: role === "write" || role === "admin",
    readOnlyReason: readOnly,
    isAdmin,
    isProjectAdmin,
    protectedReason,
    environment: selected,
    environments: visible ?? [],
    selectEnvironment: (id: string) => {
      if (!project || !mayLeave()) return;
      rememberEnvironment(project, id);
      setQuery({ environment: id });
    },
    reloadEnvironments: () => void environments.reload(),
  };
  // A project's tabs show in the project's pages, and on the global pages for the project last opened.
  const navProject = project && roleIn(session, project) !== undefined && !elsewhere ? project : undefined;
  const navRole = navProject ? roleIn(session, navProject) : undefined;
  const nav: [string, string, boolean][] = navProject
    ? [
        ["flags", "Flags", true],
        ["segments", "Segments", true],
        ["actors", "Actors", true],
        ["history", "History", true],
        // Change requests and the schedule: every environment's.
        ["changes", "Changes", true],
        // Everyone sees a project's environments; its admins change them (the page says so to the others).
        ["environments", "Environments", true],
        ["keys", "Keys", navRole === "admin"],
        ["webhooks", "Webhooks", navRole === "admin"],
        ["access", "Access", navRole === "admin"],
      ]
    : [];

  // How many sections the header links to (Projects, People, and the project's).
  const sections = nav.filter(([, , shown]) => shown).length + (listsProjects(session) ? 1 : 0) + (isAdmin ? 1 : 0);

  let page: ReactElement;
  if (elsewhere) {
    const bound = boundProject(session);
    page = (
      <section aria-labelledby="elsewhere-title">
        <h1 id="elsewhere-title">Another project</h1>
        <p role="alert">
          This key belongs to project {bound} and cannot see {parts[1]}. Sign in with a key of {parts[1]} or
          {session.user ? " with your account" : " an admin key"} to open this link.
        </p>
        <p>
          <Link to={`/p/${enc(bound ?? "")}/flags`}>Open {bound}</Link>
        </p>
      </section>
    );
  } else if (section === "projects") {
    page = listsProjects(session) ? <ProjectsPage /> : <p role="alert">This key sees its own project only.</p>;
  } else if (section === "users") {
    page = isAdmin ? (
      <UsersPage />
    ) : (
      <section aria-labelledby="users-title">
        <h1 id="users-title">People</h1>
        <p role="alert">Only admins manage people.</p>
      </section>
    );
  } else if (section === "me") {
    page = session.user ? (
      <MePage onSignedOutEverywhere={() => signOut("You signed out everywhere: every session of yours ended.", true)} />
    ) : (
      <p role="alert">This is a service key: it belongs to no person. Sign in with your account to see your page.</p>
    );
  } else if (!project) page = <p>Choose a project.</p>;
  else if (role === undefined) {
    // The server answers 404 for every route of a project the person was not granted: say so plainly.
    page = (
      <section aria-labelledby="no-access-title">
        <h1 id="no-access-title">No access to {project}</h1>
        <p role="alert">
          You have no access to project {project}, or it does not exist. An admin, or an admin of that project, can give
          you access.
        </p>
        {listsProjects(session) && (
          <p>
            <Link to="/projects">Your projects</Link>
          </p>
        )}
      </section>
    );
  } else if (!selected) {
    // Every project page acts on an environment: none is shown before the project's are known.
    page = environments.error ? <ErrorText error={environments.error} /> : <Loading what="the environments" />;
  } else if (section === "flags" && item) page = <FlagPage name={item} />;
  else if (section === "flags") page = <FlagsPage />;
  else if (section === "segments" && item) page = <SegmentPage id={item} />;
  else if (section === "segments") page = <SegmentsPage />;
  else if (section === "actors") page = <ActorsPage actorId={item} />;
  else if (section === "history") page = <HistoryPage />;
  else if (section === "changes" && item) page = <ChangeRequestPage id={item} />;
  else if (section === "changes") page = <ChangeRequestsPage />;
  else if (section === "environments") page = <EnvironmentsPage />;
  else if (["keys", "webhooks", "access"].includes(section) && !isProjectAdmin) {
    page = <p role="alert">{notProjectAdminReason(session, project)}</p>;
  } else if (section === "keys") page = <KeysPage />;
  else if (section === "webhooks") page = <WebhooksPage />;
  else if (section === "access") page = <AccessPage />;
  else page = <p role="alert">There is no such page.</p>;

  const shownRole = project && !global ? role : undefined;
  return (
    <Ctx.Provider value={ctx}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      {/* An admin's nine sections leave little room on a small desktop: the header's words then give way. */}
      <header className={sections > 7 ? "top crowded" : "top"}>
        <div className="brand">
          <Link to={startPage(session)}>Flagstaff</Link>
        </div>
        <nav aria-label="Sections">
          <ul>
            {listsProjects(session) && (
              <li>
                <Link to="/projects" current={section === "projects"}>
                  Projects
                </Link>
              </li>
            )}
            {isAdmin && (
              <li>
                <Link to="/users" current={section === "users"}>
                  People
                </Link>
              </li>
            )}
            {nav
              .filter(([, , shown]) => shown)
              .map(([id, label]) => (
                <li key={id}>
                  <Link to={`/p/${enc(navProject ?? "")}/${id}`} current={section === id}>
                    {label}
                  </Link>
                </li>
              ))}
          </ul>
        </nav>
        <div className="who">
          {navProject && (
            <span className="project" title={navProject}>
              <span className="label-word">Project </span>
              <strong>{navProject}</strong>
            </span>
          )}
          <span data-testid="signed-in" className="signed-in">
            {session.key !== undefined && (
              <span className="key" title={session.name}>
                {/* The masked key stays whole; only the name after it is cut short (whole on hover). */}
                <span className="key-id">
                  <span className="label-word">Key </span>
                  <code>{maskKey(session.key)}</code>
                </span>
                {(session.name || session.user) && (
                  <span className="key-name">
                    {session.name ? ` (${session.name})` : ""}
                    {session.user ? ` of ${session.user.name}` : ""}
                  </span>
                )}
              </span>
            )}
            {session.key === undefined && session.user && (
              <span className="key" title={session.user.email}>
                <Link to="/me" current={section === "me"}>
                  {session.user.name || session.user.email}
                </Link>
              </span>
            )}
            <span>
              · role <strong>{shownRole ?? session.role ?? session.user?.role}</strong>
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
      {readOnly && !global && (
        <p className="readonly-note" role="note">
          {readOnly === READ_ONLY_KEY
            ? "Read-only: this key has the read role, so every change is disabled."
            : readOnly}
        </p>
      )}
      <main id="main" tabIndex={-1}>
        {/* The history is the project's, every environment's: it filters by environment instead (HistoryPage). */}
        {project && selected && visible && inProject && section !== "history" && section !== "changes" && (
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
