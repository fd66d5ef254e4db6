import { type ApiKey, type CreatedApiKey, type KeyRole, PROJECT_ROLES } from "@flagstaff/sdk";
import { useState } from "react";
import { ListTable, usePaged } from "../lists.js";
import { useRevokeKey } from "../revoke-key.js";
import { ErrorText, KeySecret, Pager, SubmitOrCancel, useAction, useApp } from "../ui.js";
import { when } from "../format.js";

/** A project key's roles (the contract's PROJECT_ROLES) in words. */
const ROLE_WORDS: Record<KeyRole, string> = {
  write: "write: change flags, segments, actors",
  read: "read: read everything",
  check: "check: only check flags",
};

export function KeysPage() {
  const { conn, project, environments } = useApp();
  const environmentName = (id: string | null) =>
    id === null ? "none (every environment)" : (environments.find((e) => e.id === id)?.name ?? id);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | undefined>(undefined);
  const list = usePaged((page) => conn.client.keys.list(project).page(page), [project]);
  const revoke = useRevokeKey((key: ApiKey) => conn.client.keys.revoke(project, key.id), list.reload);
  return (
    <section aria-labelledby="keys-title">
      <div className="title-row">
        <h1 id="keys-title">API keys</h1>
        <button
          type="button"
          className="primary"
          onClick={() => {
            setCreated(undefined);
            setCreating(true);
          }}
        >
          New key
        </button>
      </div>
      {creating && (
        <NewKey
          onCreated={(key) => {
            setCreated(key);
            setCreating(false);
            void list.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      {created && (
        <KeySecret
          name={created.name}
          secret={created.key}
          headingId="secret-title"
          level={2}
          onDone={() => setCreated(undefined)}
        />
      )}
      <ErrorText error={list.error} />
      <ErrorText error={revoke.error} />
      <ListTable
        rows={list.data?.data}
        loading={list.loading}
        what="keys"
        empty="This project has no keys."
        label="Keys"
        columns={["Name", "Role", "Environment", "Id", "Created"]}
        actions
        row={(k) => (
          <tr key={k.id}>
            <td>{k.name}</td>
            <td>{k.role}</td>
            <td>{environmentName(k.environment)}</td>
            <td>
              <code>{k.id}</code>
            </td>
            <td>{when(k.createdAt)}</td>
            <td>{revoke.button(k)}</td>
          </tr>
        )}
      />
      <Pager {...list.paging} label="Keys" />
      {revoke.dialog}
    </section>
  );
}

/** The choice of "bound to no environment", which only write keys may have. */
const NO_ENVIRONMENT = "";

function NewKey(props: { onCreated: (key: CreatedApiKey) => void; onCancel: () => void }) {
  const { conn, project, environment: shown, environments } = useApp();
  const [name, setName] = useState("");
  const [role, setRole] = useState<KeyRole>("read");
  // A new key is bound to the environment on screen unless another is chosen.
  const [environment, setEnvironment] = useState(shown?.id ?? NO_ENVIRONMENT);
  const bound = role === "write" ? environment : environment || (shown?.id ?? NO_ENVIRONMENT);
  const action = useAction();
  return (
    <form
      className="card"
      aria-label="New key"
      onSubmit={async (e) => {
        e.preventDefault();
        let key: CreatedApiKey | undefined;
        if (
          await action.run(async () => {
            key = await conn.client.keys.create(project, { name, role, environment: bound || null });
          })
        )
          props.onCreated(key!);
      }}
    >
      <h2>New key</h2>
      <div className="grid2">
        <p>
          <label htmlFor="key-name">Name</label>
          <input id="key-name" required value={name} onChange={(e) => setName(e.target.value)} />
        </p>
        <p>
          <label htmlFor="key-role">Role</label>
          <select id="key-role" value={role} onChange={(e) => setRole(e.target.value as KeyRole)}>
            {PROJECT_ROLES.map((r) => (
              <option key={r} value={r}>
                {ROLE_WORDS[r]}
              </option>
            ))}
          </select>
        </p>
        <p>
          <label htmlFor="key-environment">Bound to environment</label>
          <select
            id="key-environment"
            value={bound}
            aria-describedby="key-environment-help"
            onChange={(e) => setEnvironment(e.target.value)}
          >
            {environments.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name}
              </option>
            ))}
            {role === "write" && <option value={NO_ENVIRONMENT}>None: every environment</option>}
          </select>
          <span id="key-environment-help" className="help">
            The key reads, checks and changes this environment only. Only a write key may be bound to none.
          </span>
        </p>
      </div>
      <ErrorText error={action.error} />
      <SubmitOrCancel label="Create key" busy={action.busy} onCancel={props.onCancel} />
    </form>
  );
}
