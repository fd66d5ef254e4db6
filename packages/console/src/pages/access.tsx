// A project's Access (project admins): the people granted the project, and their role on it. Admins reach
// every project without a grant; only they can list people, so only they pick whom to add.
import { GRANT_ROLES, type Grant, type GrantRole } from "@flagstaff/sdk";
import { useState } from "react";
import { allPages, ListTable, useRowActions } from "../lists.js";
import { Confirm, ErrorText, useAction, useApp, useData } from "../ui.js";
import { when } from "../format.js";

/** The roles offered, the least first: the contract's (GRANT_ROLES), which lists the most first. */
const OFFERED_ROLES = [...GRANT_ROLES].reverse();

const ROLE_WORDS: Record<GrantRole, string> = {
  admin: "admin: everything on the project, its keys, webhooks and access",
  write: "write: flags, segments, actors",
  read: "read: read everything, change nothing",
};

export function AccessPage() {
  const { conn, project, isAdmin } = useApp();
  const list = useData(() => conn.client.access.list(project), [project]);
  const [removing, setRemoving] = useState<Grant | undefined>(undefined);
  const rows = useRowActions(list.reload);
  const granted = list.data ?? [];
  return (
    <section aria-labelledby="access-title">
      <h1 id="access-title">Access</h1>
      <p className="muted">
        The people who may reach {project}, and their role on it. Admins reach every project without a grant.
      </p>
      {isAdmin ? (
        <GrantForm granted={granted} onGranted={() => void list.reload()} />
      ) : (
        <p className="card" id="grant-by-admin">
          An admin adds people to a project: only admins can list the people of this Flagstaff. Here you change the role
          of those already granted, or remove them.
        </p>
      )}
      <ErrorText error={list.error} />
      <ListTable
        rows={list.data}
        loading={list.loading}
        what="the access list"
        empty="Nobody was granted this project yet."
        label="Access"
        columns={["Name", "E-mail", "Role", "Since"]}
        actions
        row={(g) => (
          <GrantRow
            key={g.userId}
            grant={g}
            busy={rows.busy(g.userId)}
            error={rows.error(g.userId)}
            onRole={(role) => rows.act(g.userId, () => conn.client.access.grant(project, g.userId, role))}
            onRemove={() => {
              rows.clear();
              setRemoving(g);
            }}
          />
        )}
      />
      <Confirm
        open={removing !== undefined}
        danger
        title={`Remove ${removing?.email ?? ""} from ${project}?`}
        confirmLabel="Remove access"
        onCancel={() => setRemoving(undefined)}
        onConfirm={async () => {
          const g = removing;
          setRemoving(undefined);
          if (g) await rows.act(g.userId, () => conn.client.access.revoke(project, g.userId));
        }}
      >
        <p>
          They no longer see this project (unless they are an admin), and their personal keys stop working on it at
          once.
        </p>
      </Confirm>
    </section>
  );
}

function GrantRow(props: {
  grant: Grant;
  busy: boolean;
  error: unknown;
  onRole: (role: GrantRole) => void;
  onRemove: () => void;
}) {
  const { grant: g } = props;
  return (
    <>
      <tr>
        <td>{g.name}</td>
        <td>{g.email}</td>
        <td>
          <select
            aria-label={`Role of ${g.email}`}
            value={g.role}
            disabled={props.busy}
            onChange={(e) => props.onRole(e.target.value as GrantRole)}
          >
            {GRANT_ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </td>
        <td>{when(g.createdAt)}</td>
        <td>
          <button
            type="button"
            className="danger"
            aria-label={`Remove ${g.email}`}
            disabled={props.busy}
            onClick={props.onRemove}
          >
            Remove
          </button>
        </td>
      </tr>
      {props.error !== undefined && (
        <tr>
          <td colSpan={5}>
            <ErrorText error={props.error} />
          </td>
        </tr>
      )}
    </>
  );
}

/** Up to this many pages of people are offered in the picker. */
const PICKER_PAGES = 20;

function GrantForm(props: { granted: Grant[]; onGranted: () => void }) {
  const { conn, project } = useApp();
  // The people, read once (and after each grant): a picker that changed under the cursor would mislead.
  const people = useData(() => allPages((page) => conn.client.users.list().page(page), PICKER_PAGES), [project], 0);
  const [userId, setUserId] = useState("");
  const [role, setRole] = useState<GrantRole>("read");
  const action = useAction();
  const taken = new Set(props.granted.map((g) => g.userId));
  // Admins reach every project already; disabled people cannot sign in. Both stay out of the picker.
  const offered = (people.data ?? []).filter((u) => !taken.has(u.id) && u.role !== "admin" && !u.disabled);
  const noneLeft = people.data !== undefined && offered.length === 0;
  return (
    <form
      className="card"
      aria-labelledby="grant-title"
      onSubmit={async (e) => {
        e.preventDefault();
        if (userId === "") return;
        if (await action.run(async () => void (await conn.client.access.grant(project, userId, role)))) {
          setUserId("");
          props.onGranted();
        }
      }}
    >
      <h2 id="grant-title">Give a person access</h2>
      <ErrorText error={people.error} />
      <div className="grid2">
        <p>
          <label htmlFor="grant-person">Person</label>
          <select
            id="grant-person"
            required
            value={userId}
            disabled={noneLeft}
            aria-describedby="grant-person-help"
            onChange={(e) => setUserId(e.target.value)}
          >
            <option value="">{people.data === undefined ? "Loading people…" : "Choose by e-mail"}</option>
            {offered
              .slice()
              .sort((a, b) => a.email.localeCompare(b.email))
              .map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email} ({u.name})
                </option>
              ))}
          </select>
          <span id="grant-person-help" className="help">
            {noneLeft
              ? "Everyone who is not an admin already has access. Add people on the People page."
              : "Members who have no access yet. Admins reach every project without a grant; add new people on the People page."}
          </span>
        </p>
        <p>
          <label htmlFor="grant-role">Role</label>
          <select id="grant-role" value={role} onChange={(e) => setRole(e.target.value as GrantRole)}>
            {OFFERED_ROLES.map((r) => (
              <option key={r} value={r}>
                {ROLE_WORDS[r]}
              </option>
            ))}
          </select>
        </p>
      </div>
      <ErrorText error={action.error} />
      <button type="submit" className="primary" disabled={action.busy || userId === "" || noneLeft}>
        Grant access
      </button>
      {userId === "" && !noneLeft && <span className="help">Choose a person first.</span>}
    </form>
  );
}
