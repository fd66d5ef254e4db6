// People (admins): who may sign in, as what; a password set, reset or removed; disabled, enabled or deleted.
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, type User, USER_ROLES, type UserRole } from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import { ListTable, usePaged, useRowActions } from "../lists.js";
import { Confirm, ErrorText, Pager, TextField, useAction, useApp } from "../ui.js";
import { ago, atField, when } from "../format.js";

/** Passwords the server takes (the contract's limits; docs/people.md). */
const PASSWORD_HELP = `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`;

/** A person's roles as the selects offer them, member first: the contract's (USER_ROLES) lists admin first. */
const ROLES_OFFERED = [...USER_ROLES].reverse();

/** Why an admin's own row cannot be changed: the server refuses it (409 cannot_change_self), so a deployment keeps its admin. */
const SELF_REASON = "You cannot disable, demote or delete yourself: another admin can.";

export function UsersPage() {
  const { conn, session } = useApp();
  const list = usePaged((page) => conn.client.users.list().page(page), []);
  const [deleting, setDeleting] = useState<User | undefined>(undefined);
  const [resetting, setResetting] = useState<User | undefined>(undefined);
  /** The row an action runs on, or failed on with its error, shown under that row. */
  const rows = useRowActions(list.reload);
  const self = session.key === undefined ? session.user?.id : undefined;

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">People</h1>
      <p className="muted">
        People sign in to the console with single sign-on or a password. An admin reaches every project and manages
        people; a member reaches the projects granted to them (a project's <strong>Access</strong> page).
      </p>
      <NewPerson onCreated={() => void list.reload()} />
      <ErrorText error={list.error} />
      <ListTable
        rows={list.data?.data}
        loading={list.loading}
        what="people"
        empty="No people yet."
        label="People"
        columns={["Name", "E-mail", "Role", "Status", "Password", "Last sign-in"]}
        actions
        row={(u) => {
          const isSelf = u.id === self;
          const selfNote = isSelf ? `self-${u.id}` : undefined;
          return (
            <UserRow
              key={u.id}
              user={u}
              isSelf={isSelf}
              selfNote={selfNote}
              busy={rows.busy(u.id)}
              error={rows.error(u.id)}
              onRole={(role) => rows.act(u.id, () => conn.client.users.update(u.id, { role }))}
              onDisabled={(disabled) => rows.act(u.id, () => conn.client.users.update(u.id, { disabled }))}
              onReset={() => {
                rows.clear();
                setResetting(u);
              }}
              onDelete={() => {
                rows.clear();
                setDeleting(u);
              }}
            />
          );
        }}
      />
      <Pager {...list.paging} label="People" />
      <PasswordDialog
        user={resetting}
        onClose={() => setResetting(undefined)}
        onChanged={async () => {
          setResetting(undefined);
          await list.reload();
        }}
      />
      <Confirm
        open={deleting !== undefined}
        danger
        title={`Delete ${deleting?.email ?? ""}?`}
        confirmLabel="Delete person"
        typeToConfirm={deleting?.email ?? ""}
        onCancel={() => setDeleting(undefined)}
        onConfirm={async () => {
          const u = deleting;
          setDeleting(undefined);
          if (u) await rows.act(u.id, () => conn.client.users.delete(u.id));
        }}
      >
        <p>
          Their grants, sessions and personal keys are deleted with them; the history keeps their name on what they
          changed. This cannot be undone: to stop them for now, disable them instead.
        </p>
      </Confirm>
    </section>
  );
}

function UserRow(props: {
  user: User;
  isSelf: boolean;
  selfNote: string | undefined;
  busy: boolean;
  error: unknown;
  onRole: (role: UserRole) => void;
  onDisabled: (disabled: boolean) => void;
  onReset: () => void;
  onDelete: () => void;
}) {
  const { user: u, isSelf, selfNote } = props;
  return (
    <>
      <tr aria-describedby={props.error ? `user-error-${u.id}` : undefined}>
        <td>{u.name}</td>
        <td>{u.email}</td>
        <td>
          <select
            aria-label={`Role of ${u.email}`}
            value={u.role}
            disabled={isSelf || props.busy}
            aria-describedby={selfNote}
            onChange={(e) => props.onRole(e.target.value as UserRole)}
          >
            {ROLES_OFFERED.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </td>
        <td>
          <span className={`badge ${u.disabled ? "status-disabled" : "status-enabled"}`}>
            {u.disabled ? "disabled" : "active"}
          </span>
        </td>
        <td>{u.hasPassword ? "set" : "none"}</td>
        <td title={when(u.lastSignInAt)}>{ago(u.lastSignInAt)}</td>
        <td>
          <div className="row actions">
            <button
              type="button"
              aria-label={`${u.disabled ? "Enable" : "Disable"} ${u.email}`}
              disabled={isSelf || props.busy}
              aria-describedby={selfNote}
              onClick={() => props.onDisabled(!u.disabled)}
            >
              {u.disabled ? "Enable" : "Disable"}
            </button>
            <button type="button" aria-label={`Password of ${u.email}`} disabled={props.busy} onClick={props.onReset}>
              Password…
            </button>
            <button
              type="button"
              className="danger"
              aria-label={`Delete ${u.email}`}
              disabled={isSelf || props.busy}
              aria-describedby={selfNote}
              onClick={props.onDelete}
            >
              Delete
            </button>
          </div>
          {selfNote && (
            <span id={selfNote} className="help">
              {SELF_REASON}
            </span>
          )}
        </td>
      </tr>
      {props.error !== undefined && (
        <tr>
          <td colSpan={7}>
            <ErrorText error={props.error} id={`user-error-${u.id}`} />
          </td>
        </tr>
      )}
    </>
  );
}

function NewPerson(props: { onCreated: () => void }) {
  const { conn } = useApp();
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<UserRole>("member");
  const [password, setPassword] = useState("");
  const [created, setCreated] = useState<string | undefined>(undefined);
  const action = useAction();
  // 409 user_exists names no field: it is about the e-mail.
  const error = atField(action.error, { user_exists: ["/email", "is taken: another person has it"] });
  return (
    <form
      className="card"
      aria-labelledby="new-person-title"
      onSubmit={async (e) => {
        e.preventDefault();
        setCreated(undefined);
        const made = email.trim();
        if (
          await action.run(async () => {
            await conn.client.users.create({
              email: made,
              name: name.trim(),
              role,
              ...(password === "" ? {} : { password }),
            });
          })
        ) {
          setEmail("");
          setName("");
          setPassword("");
          setRole("member");
          setCreated(`${made} was added.`);
          props.onCreated();
        }
      }}
    >
      <h2 id="new-person-title">New person</h2>
      <div className="grid2">
        <TextField
          id="person-email"
          label="E-mail"
          field="email"
          value={email}
          onChange={setEmail}
          error={error}
          required
        />
        <TextField id="person-name" label="Name" field="name" value={name} onChange={setName} error={error} required />
        <div className="field">
          <label htmlFor="person-role">Role</label>
          <select
            id="person-role"
            value={role}
            aria-describedby="person-role-help"
            onChange={(e) => setRole(e.target.value as UserRole)}
          >
            {ROLES_OFFERED.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          {/* What each role allows, under the select rather than in its options: an option's text is cut
              short by a select no wider than its column. */}
          <span id="person-role-help" className="help">
            A member reaches the projects granted to them; an admin reaches every project, and the people.
          </span>
        </div>
        <PasswordField id="person-password" value={password} onChange={setPassword} error={error} optional />
      </div>
      <ErrorText error={error} shownFields={["email", "name", "password"]} />
      {created && (
        <p className="notice" role="status">
          {created}
        </p>
      )}
      <button type="submit" className="primary" disabled={action.busy}>
        Add person
      </button>
    </form>
  );
}

function PasswordField(props: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  error: unknown;
  optional?: boolean;
}) {
  return (
    <TextField
      id={props.id}
      label={props.optional ? "Password (optional)" : "New password"}
      field="password"
      value={props.value}
      onChange={props.onChange}
      error={props.error}
      required={!props.optional}
      help={
        props.optional
          ? `${PASSWORD_HELP} Without one, the person signs in with single sign-on, or an admin sets one later. Once signed in, they change it on their Me page.`
          : `${PASSWORD_HELP} Setting it signs the person out everywhere.`
      }
      type="password"
      autoComplete="new-password"
    />
  );
}

/** Sets a new password, or removes it (both end the person's sessions). */
function PasswordDialog(props: { user: User | undefined; onClose: () => void; onChanged: () => Promise<void> }) {
  const { conn } = useApp();
  const [password, setPassword] = useState("");
  const action = useAction();
  const user = props.user;
  useEffect(() => {
    // Each opening starts empty, without the last one's error.
    setPassword("");
    action.clear();
  }, [user?.id]);
  return (
    <Confirm
      open={user !== undefined}
      title={`Password of ${user?.email ?? ""}`}
      confirmLabel="Set password"
      confirmDisabled={password === "" || action.busy}
      onCancel={props.onClose}
      onConfirm={async () => {
        if (!user) return;
        if (await action.run(async () => void (await conn.client.users.update(user.id, { password })))) {
          await props.onChanged();
        }
      }}
    >
      <div>
        <p>
          {user?.hasPassword
            ? "They have a password. A new one replaces it and signs them out everywhere."
            : "They have no password: they sign in with single sign-on only, until you set one."}
        </p>
        <PasswordField id="reset-password" value={password} onChange={setPassword} error={action.error} />
        <ErrorText error={action.error} shownFields={["password"]} />
        {user?.hasPassword && (
          <p>
            <button
              type="button"
              className="danger"
              disabled={action.busy}
              onClick={async () => {
                if (await action.run(async () => void (await conn.client.users.update(user.id, { password: null })))) {
                  await props.onChanged();
                }
              }}
            >
              Remove password
            </button>
            <span className="help">They then sign in with single sign-on only.</span>
          </p>
        )}
      </div>
    </Confirm>
  );
}
