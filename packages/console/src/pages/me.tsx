// The person's own page: who they are, the projects they reach, their password (set or changed here: a
// person invited by a one-time link lands here to set one), signing out everywhere, and their personal keys
// (keys that act for them, never with more than they hold).
import {
  type CreatedPersonalKey,
  GRANT_ROLES,
  type GrantRole,
  KEY_ROLES,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  type PersonalKey,
  type WhoAmIGrant,
} from "@flagstaff/sdk";
import { useState } from "react";
import { isAdmin as isAdminOf } from "../api/access.js";
import { PAGE_MAX } from "../contract.js";
import { ListTable } from "../lists.js";
import { useRevokeKey } from "../revoke-key.js";
import { useUrlQuery } from "../url-state.js";
import { Confirm, KeySecret, ErrorText, enc, Link, Loading, TextField, useAction, useApp, useData } from "../ui.js";
import { atField, when } from "../format.js";

/** A personal key's role: any key's (the contract's KEY_ROLES). */
type PersonalRole = (typeof KEY_ROLES)[number];
/**
 * The roles offered, as a person's grants rank them, least first (the contract's GRANT_ROLES, which lists
 * the most first), then those of keys only (check).
 */
const OFFERED_ROLES: readonly PersonalRole[] = [
  ...[...GRANT_ROLES].reverse(),
  ...KEY_ROLES.filter((r) => !(GRANT_ROLES as readonly string[]).includes(r)),
];
const RANK: Record<PersonalRole, number> = { check: 0, read: 1, write: 2, admin: 3 };
const ROLE_WORDS: Record<PersonalRole, string> = {
  admin: "admin: what you may do as admin",
  write: "write: change flags, segments, actors",
  read: "read: read everything",
  check: "check: only check flags",
};

export function MePage(props: { onSignedOutEverywhere: () => void }) {
  const { session, conn } = useApp();
  const user = session.user!;
  const admin = user.role === "admin";
  const [confirming, setConfirming] = useState(false);
  const everywhere = useAction();
  return (
    <section aria-labelledby="me-title">
      <h1 id="me-title">{user.name || user.email}</h1>
      <dl className="pairs facts">
        <dt>E-mail</dt>
        <dd>{user.email}</dd>
        <dt>Role</dt>
        <dd>{admin ? "admin: every project, and the people" : "member: the projects granted to you"}</dd>
        {session.key !== undefined && (
          <>
            <dt>Signed in with</dt>
            <dd>your personal key {session.name ? `"${session.name}"` : ""}</dd>
          </>
        )}
      </dl>
      <OwnPassword />
      {!admin && (
        <>
          <h2>Your projects</h2>
          {(session.grants ?? []).length === 0 ? (
            <p>You have access to no project yet. An admin, or an admin of a project, can give you access.</p>
          ) : (
            <ul className="plain">
              {(session.grants ?? []).map((g) => (
                <li key={g.projectId}>
                  <Link to={`/p/${enc(g.projectId)}/flags`}>{g.projectId}</Link> — {g.role}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      <PersonalKeys />
      <section className="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">Sessions</h2>
        <p>Signed in on another computer, or lost a laptop? Signing out everywhere ends every session of yours.</p>
        <button type="button" className="danger" disabled={everywhere.busy} onClick={() => setConfirming(true)}>
          Sign out everywhere
        </button>
        <ErrorText error={everywhere.error} />
      </section>
      <Confirm
        open={confirming}
        danger
        title="Sign out everywhere?"
        confirmLabel="Sign out everywhere"
        onCancel={() => setConfirming(false)}
        onConfirm={async () => {
          setConfirming(false);
          if (await everywhere.run(() => conn.client.auth.signOutEverywhere())) props.onSignedOutEverywhere();
        }}
      >
        <p>Every session of yours ends, this one included, in every browser. Personal keys keep working.</p>
      </Confirm>
    </section>
  );
}

/**
 * Setting or changing one's own password (`PUT /users/me/password`), in a session only. The current
 * password is asked for when there is one. Arriving by a one-time link (`?signedInBy=link`), which works
 * once, the page asks for a password at the top.
 */
function OwnPassword() {
  const { session, conn } = useApp();
  const [query, setQuery] = useUrlQuery();
  const me = useData(() => conn.client.users.me(), []);
  const methods = useData(() => conn.client.auth.methods(), [], 0);
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeated, setRepeated] = useState("");
  const [done, setDone] = useState<string | undefined>(undefined);
  const action = useAction();
  const byLink = query.get("signedInBy") === "link";
  const user = me.data;
  const oidc = methods.data?.oidc?.name;
  const passwordsOff = methods.data !== undefined && !methods.data.password;
  const byKey = session.key !== undefined;
  const mismatch = repeated !== "" && repeated !== next;
  const has = user?.hasPassword === true;
  // A wrong current password is put under its field, like a validation error.
  const error = atField(action.error, { invalid_credentials: ["/currentPassword", "is wrong"] });
  return (
    <>
      {byLink && user && !has && !passwordsOff && (
        <div className="card notice" role="status" aria-labelledby="welcome-title">
          <h2 id="welcome-title">Welcome: set a password now</h2>
          <p>
            You signed in with a one-time link, which cannot be used again. Set a password below to sign in next time
            with your e-mail, {user.email}
            {oidc ? `, or sign in with ${oidc}` : ""}. When this session ends, the link will not sign you in.
          </p>
        </div>
      )}
      <section className="card" aria-labelledby="password-title">
        <h2 id="password-title">Password</h2>
        <ErrorText error={me.error} />
        {done && <p role="status">{done}</p>}
        {user === undefined || methods.data === undefined ? (
          <Loading what="your password's state" />
        ) : passwordsOff ? (
          <p>
            Password sign-in is turned off on this server: you sign in with {oidc ?? "single sign-on"}
            {user.hasPassword ? "; the password you have is not used" : ""}.
          </p>
        ) : byKey ? (
          <p>
            Only a signed-in session sets a password (a key cannot mint a sign-in): sign in with your account to{" "}
            {has ? "change" : "set"} it.
          </p>
        ) : (
          <form
            aria-labelledby="password-title"
            onSubmit={async (e) => {
              e.preventDefault();
              if (mismatch) return;
              setDone(undefined);
              const input = has ? { currentPassword: current, newPassword: next } : { newPassword: next };
              if (await action.run(async () => void (await conn.client.auth.setPassword(input)))) {
                setCurrent("");
                setNext("");
                setRepeated("");
                setDone(
                  has
                    ? "Your password is changed. Your other sessions were signed out; this one goes on."
                    : `Your password is set: next time, sign in with ${user.email} and it. Your other sessions were signed out; this one goes on.`,
                );
                if (byLink) setQuery({ signedInBy: undefined });
                await me.reload();
              }
            }}
          >
            <p className="muted">
              {has
                ? "You sign in with your e-mail and a password. Changing it signs you out everywhere else."
                : `You have no password yet: you signed in ${oidc ? `with ${oidc} or ` : ""}with a one-time link. Set one to sign in with your e-mail.`}
            </p>
            <div className="grid2">
              {has && (
                <TextField
                  id="current-password"
                  label="Current password"
                  field="currentPassword"
                  value={current}
                  onChange={setCurrent}
                  error={error}
                  type="password"
                  autoComplete="current-password"
                  required
                />
              )}
              <TextField
                id="new-password"
                label="New password"
                field="newPassword"
                value={next}
                onChange={setNext}
                error={error}
                type="password"
                autoComplete="new-password"
                help={`${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`}
                required
              />
              <div className="field">
                <label htmlFor="repeat-password">Repeat the new password</label>
                <input
                  id="repeat-password"
                  type="password"
                  autoComplete="new-password"
                  required
                  value={repeated}
                  aria-invalid={mismatch ? true : undefined}
                  aria-describedby={mismatch ? "repeat-password-error" : undefined}
                  onChange={(e) => setRepeated(e.target.value)}
                />
                {mismatch && (
                  <span id="repeat-password-error" className="error field-error" role="alert">
                    The two new passwords differ.
                  </span>
                )}
              </div>
            </div>
            <ErrorText error={error} shownFields={["currentPassword", "newPassword"]} />
            <button type="submit" className="primary" disabled={action.busy || mismatch}>
              {has ? "Change password" : "Set password"}
            </button>
          </form>
        )}
      </section>
    </>
  );
}

function PersonalKeys() {
  const { session, conn } = useApp();
  const list = useData(() => conn.client.personalKeys.list(), []);
  const [created, setCreated] = useState<CreatedPersonalKey | undefined>(undefined);
  const revoke = useRevokeKey((key: PersonalKey) => conn.client.personalKeys.revoke(key.id), list.reload);
  // A leaked key must not mint more: only a session creates one (the server refuses a key, 403).
  const createBlocked =
    session.key !== undefined
      ? "Only a signed-in session creates personal keys (a key cannot make more): sign in with your account."
      : undefined;
  return (
    <section className="card" aria-labelledby="personal-keys-title">
      <h2 id="personal-keys-title">Personal keys</h2>
      <p className="muted">
        Keys that act for you from scripts and tools, never with more than you hold: a grant taken away shrinks them at
        once, and they stop when your account is disabled.
      </p>
      <NewPersonalKey
        blocked={createBlocked}
        onCreated={(k) => {
          setCreated(k);
          void list.reload();
        }}
      />
      {created && (
        <KeySecret
          name={created.name}
          secret={created.key}
          headingId="personal-secret-title"
          level={3}
          onDone={() => setCreated(undefined)}
        />
      )}
      <ErrorText error={list.error} />
      <ErrorText error={revoke.error} />
      <ListTable
        rows={list.data}
        loading={list.loading}
        what="your keys"
        empty="You have no personal keys."
        label="Personal keys"
        columns={["Name", "Project", "Role", "Created"]}
        actions
        row={(k) => (
          <tr key={k.id}>
            <td>{k.name}</td>
            <td>{k.projectId ?? "every project you reach"}</td>
            <td>{k.role}</td>
            <td>{when(k.createdAt)}</td>
            <td>{revoke.button(k)}</td>
          </tr>
        )}
      />
      {revoke.dialog}
    </section>
  );
}

/** The most a person's key may have on a project, or anywhere (no project): what they hold there. */
function heldRole(admin: boolean, grants: WhoAmIGrant[], project: string): GrantRole | undefined {
  if (admin) return "admin";
  if (project !== "") return grants.find((g) => g.projectId === project)?.role;
  // A key of every project reaches each with the lesser of its role and the grant there: offer up to the highest.
  return grants.reduce<GrantRole | undefined>(
    (best, g) => (best && RANK[best] >= RANK[g.role] ? best : g.role),
    undefined,
  );
}

function NewPersonalKey(props: { blocked: string | undefined; onCreated: (key: CreatedPersonalKey) => void }) {
  const { session, conn } = useApp();
  const admin = isAdminOf(session) || session.user?.role === "admin";
  const grants = session.grants ?? [];
  // An admin may bind a key to any project: the list is the project list (its first page), else the grants.
  const projects = useData(
    async () =>
      admin
        ? (await conn.client.projects.list().page({ limit: PAGE_MAX })).data.map((p) => p.id)
        : grants.map((g) => g.projectId),
    [admin, grants.map((g) => g.projectId).join(" ")],
    0,
  );
  const [name, setName] = useState("");
  const [project, setProject] = useState("");
  const [role, setRole] = useState<PersonalRole>("read");
  const action = useAction();
  const held = heldRole(admin, grants, project);
  const tooMuch = (r: PersonalRole) => held === undefined || RANK[r] > RANK[held];
  const reason =
    props.blocked ?? (held === undefined ? "You have access to no project yet: a key would reach nothing." : undefined);
  return (
    <form
      aria-labelledby="new-personal-key-title"
      onSubmit={async (e) => {
        e.preventDefault();
        let key: CreatedPersonalKey | undefined;
        if (
          await action.run(async () => {
            key = await conn.client.personalKeys.create({ name: name.trim(), role, ...(project ? { project } : {}) });
          })
        ) {
          setName("");
          props.onCreated(key!);
        }
      }}
    >
      <h3 id="new-personal-key-title">New personal key</h3>
      <fieldset
        disabled={reason !== undefined}
        className="plain-fieldset"
        aria-describedby={reason ? "personal-key-reason" : undefined}
      >
        <div className="grid2">
          <TextField
            id="personal-key-name"
            label="Name"
            field="name"
            value={name}
            onChange={setName}
            error={action.error}
            required
          />
          <div className="field">
            <label htmlFor="personal-key-project">Project</label>
            <select id="personal-key-project" value={project} onChange={(e) => setProject(e.target.value)}>
              <option value="">Every project you reach</option>
              {(projects.data ?? []).map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="personal-key-role">Role</label>
            <select
              id="personal-key-role"
              value={role}
              aria-describedby="personal-key-role-help"
              onChange={(e) => setRole(e.target.value as PersonalRole)}
            >
              {OFFERED_ROLES.map((r) => (
                <option key={r} value={r} disabled={tooMuch(r)}>
                  {ROLE_WORDS[r]}
                  {tooMuch(r) ? " (more than you hold)" : ""}
                </option>
              ))}
            </select>
            <span id="personal-key-role-help" className="help">
              {held === undefined
                ? "You hold no role there."
                : `You hold ${held}${project ? ` on ${project}` : admin ? "" : " at most"}: a key cannot have more.`}
            </span>
          </div>
        </div>
        <ErrorText error={action.error} shownFields={["name"]} />
        <button type="submit" className="primary" disabled={action.busy || tooMuch(role)}>
          Create personal key
        </button>
      </fieldset>
      {reason && (
        <p id="personal-key-reason" className="help">
          {reason}
        </p>
      )}
    </form>
  );
}
