// A project's environments (docs/environments.md): their order, the default, which are protected; and for
// the project's admins, creating (empty or as a copy of another), renaming, moving, making the default,
// protecting and deleting one, through the SDK's `environments` calls. Everyone else sees it read-only and
// is told why, as is a key bound to one environment (the server refuses it what reaches beyond it).
import {
  type ApiKey,
  DESCRIPTION_MAX_LENGTH,
  type Environment,
  NAME_MAX_LENGTH,
  PROJECT_ID_MAX_LENGTH,
} from "@flagstaff/sdk";
import { useEffect, useRef, useState } from "react";
import { notProjectAdminReason } from "../api/access.js";
import { ENVIRONMENT_ID_INPUT, PAGE_MAX } from "../contract.js";
import { Confirm, ErrorText, Loading, SubmitOrCancel, TextField, useAction, useApp, useData } from "../ui.js";

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

export function EnvironmentsPage() {
  const { session, conn, project, isProjectAdmin, reloadEnvironments } = useApp();
  // Every environment, whatever the key is bound to: the list shows no configuration (any key may list it).
  const list = useData(() => conn.client.environments.list(project, { limit: PAGE_MAX }).toArray(), [project]);
  const bound = session.environment ? list.data?.find((e) => e.id === session.environment) : undefined;
  const blocked = !isProjectAdmin
    ? `Read-only: ${lowerFirst(notProjectAdminReason(session, project) ?? "")}`
    : session.environment
      ? `Read-only: this key is bound to ${bound?.name ?? session.environment}, and environments belong to the whole project. Manage them signed in, or with a key bound to no environment.`
      : undefined;
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const [deleting, setDeleting] = useState<Environment | undefined>(undefined);
  const [defaulting, setDefaulting] = useState<Environment | undefined>(undefined);
  const [announcement, setAnnouncement] = useState("");
  // After a move, focus stays on the moved environment's button (the other one at either end).
  const refocus = useRef<{ id: string; direction: "up" | "down" } | undefined>(undefined);
  const action = useAction();
  const environments = list.data ?? [];
  const current = environments.find((e) => e.default);

  useEffect(() => {
    const want = refocus.current;
    if (!want || !list.data) return;
    const index = list.data.findIndex((e) => e.id === want.id);
    const atEnd = want.direction === "up" ? index === 0 : index === list.data.length - 1;
    const direction = atEnd ? (want.direction === "up" ? "down" : "up") : want.direction;
    document.getElementById(`move-${direction}-${want.id}`)?.focus();
    refocus.current = undefined;
  }, [list.data]);

  const changed = async () => {
    await list.reload();
    reloadEnvironments();
  };
  const run = async (work: () => Promise<unknown>) => {
    if (await action.run(async () => void (await work()))) await changed();
  };
  const move = async (environment: Environment, direction: "up" | "down") => {
    const index = environments.findIndex((e) => e.id === environment.id);
    const position = index + 1 + (direction === "up" ? -1 : 1);
    refocus.current = { id: environment.id, direction };
    await run(() => conn.client.environments.update(project, environment.id, { position }));
    setAnnouncement(`${environment.name} moved to place ${position} of ${environments.length}.`);
  };

  return (
    <section aria-labelledby="environments-title">
      <div className="title-row">
        <h1 id="environments-title">Environments</h1>
        <button
          type="button"
          className="primary"
          disabled={blocked !== undefined}
          aria-describedby={blocked ? "environments-blocked" : undefined}
          onClick={() => setCreating(true)}
        >
          New environment
        </button>
      </div>
      <p className="muted">
        Each environment holds its own configuration of every flag: status, percentages, targeting, attached actors and
        segments. Keys bound to no environment act on the default. The order is the one the console and the API list
        them in.
      </p>
      {blocked && (
        <p id="environments-blocked" className="readonly-note" role="note">
          {blocked}
        </p>
      )}
      {creating && !blocked && (
        <NewEnvironment
          environments={environments}
          onCreated={async () => {
            setCreating(false);
            await changed();
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      <ErrorText error={list.error} />
      <ErrorText error={action.error} />
      <p className="visually-hidden" aria-live="polite">
        {announcement}
      </p>
      {list.data === undefined && list.loading && <Loading what="environments" />}
      <fieldset
        className="plain-fieldset"
        disabled={blocked !== undefined || action.busy}
        aria-describedby={blocked ? "environments-blocked" : undefined}
      >
        <legend className="visually-hidden">The project's environments, in their order</legend>
        <ol className="environments" aria-label="Environments">
          {environments.map((e, index) => (
            <li key={e.id} className="card environment" aria-labelledby={`environment-${e.id}-name`}>
              <div className="environment-head">
                <span className="place" aria-hidden="true">
                  {index + 1}
                </span>
                <h2 id={`environment-${e.id}-name`}>{e.name}</h2>
                {e.default && <span className="badge">default</span>}
                {e.protected && <span className="badge">protected</span>}
                {e.requiredApprovals > 0 && (
                  <span className="badge">
                    {e.requiredApprovals} approval{e.requiredApprovals === 1 ? "" : "s"}
                  </span>
                )}
              </div>
              <p className="muted">
                Id <code>{e.id}</code>
                {e.description ? ` — ${e.description}` : ""}
              </p>
              {editing === e.id ? (
                <EditEnvironment
                  environment={e}
                  onSaved={async () => {
                    setEditing(undefined);
                    await changed();
                  }}
                  onCancel={() => setEditing(undefined)}
                />
              ) : (
                <div className="row">
                  <button
                    type="button"
                    id={`move-up-${e.id}`}
                    aria-label={`Move ${e.name} up`}
                    disabled={index === 0}
                    onClick={() => void move(e, "up")}
                  >
                    ↑ Move up
                  </button>
                  <button
                    type="button"
                    id={`move-down-${e.id}`}
                    aria-label={`Move ${e.name} down`}
                    disabled={index === environments.length - 1}
                    onClick={() => void move(e, "down")}
                  >
                    ↓ Move down
                  </button>
                  <button type="button" aria-label={`Rename ${e.name}`} onClick={() => setEditing(e.id)}>
                    Rename…
                  </button>
                  {!e.default && (
                    <button type="button" aria-label={`Make ${e.name} the default`} onClick={() => setDefaulting(e)}>
                      Make default
                    </button>
                  )}
                  <button
                    type="button"
                    aria-label={`${e.protected ? "Unprotect" : "Protect"} ${e.name}`}
                    aria-pressed={e.protected}
                    onClick={() =>
                      void run(() => conn.client.environments.update(project, e.id, { protected: !e.protected }))
                    }
                  >
                    {e.protected ? "Unprotect" : "Protect"}
                  </button>
                  <label className="inline-control">
                    Approvals{" "}
                    <select
                      aria-label={`Approvals required in ${e.name}`}
                      value={e.requiredApprovals}
                      onChange={(event) =>
                        void run(() =>
                          conn.client.environments.update(project, e.id, {
                            requiredApprovals: Number(event.target.value),
                          }),
                        )
                      }
                    >
                      {[0, 1, 2, 3, 4, 5].map((n) => (
                        <option key={n} value={n}>
                          {n === 0 ? "none" : n}
                        </option>
                      ))}
                    </select>
                  </label>
                  {e.requiredApprovals > 0 && (
                    <label className="check">
                      <input
                        type="checkbox"
                        checked={e.allowSelfApproval}
                        aria-label={`Authors may approve their own requests in ${e.name}`}
                        onChange={(event) =>
                          void run(() =>
                            conn.client.environments.update(project, e.id, { allowSelfApproval: event.target.checked }),
                          )
                        }
                      />{" "}
                      Authors may approve their own
                    </label>
                  )}
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Delete ${e.name}`}
                    disabled={e.default}
                    aria-describedby={e.default ? `environment-${e.id}-default` : undefined}
                    onClick={() => setDeleting(e)}
                  >
                    Delete…
                  </button>
                </div>
              )}
              {e.default && (
                <p id={`environment-${e.id}-default`} className="help">
                  The default cannot be deleted: make another environment the default first.
                </p>
              )}
            </li>
          ))}
        </ol>
      </fieldset>
      <p className="help">
        <strong>Protected</strong>: only admins of this project change its configurations; writers still change a flag's
        description and variants, which every environment shares. <strong>Approvals</strong>: changes to its
        configurations go through a change request that many people approve (see Changes).
      </p>
      <Confirm
        open={defaulting !== undefined}
        title={`Make ${defaulting?.name ?? ""} the default?`}
        confirmLabel="Make default"
        onCancel={() => setDefaulting(undefined)}
        onConfirm={async () => {
          const target = defaulting;
          setDefaulting(undefined);
          if (target) await run(() => conn.client.environments.update(project, target.id, { default: true }));
        }}
      >
        <p>
          Keys bound to no environment (admin keys, write keys bound to none) act on {defaulting?.name} instead of{" "}
          {current?.name ?? "the default now"} from now on, and so do their checks and streams.
        </p>
      </Confirm>
      <DeleteEnvironment
        environment={deleting}
        onCancel={() => setDeleting(undefined)}
        onConfirm={async () => {
          const target = deleting;
          setDeleting(undefined);
          if (target) await run(() => conn.client.environments.delete(project, target.id));
        }}
      />
    </section>
  );
}

/** The confirmation of a deletion: the name typed, and what is lost, with the keys revoked named. */
function DeleteEnvironment(props: {
  environment: Environment | undefined;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const { conn, project } = useApp();
  const id = props.environment?.id;
  // The keys bound to it, read when the dialog opens: every one is revoked with it.
  const keys = useData<ApiKey[] | undefined>(
    async () =>
      id === undefined
        ? undefined
        : (await conn.client.keys.list(project).toArray()).filter((k) => k.environment === id),
    [id],
    0,
  );
  const bound = keys.data ?? [];
  return (
    <Confirm
      open={props.environment !== undefined}
      danger
      title={`Delete ${props.environment?.name ?? ""}?`}
      confirmLabel="Delete environment"
      typeToConfirm={props.environment?.name}
      confirmDisabled={keys.loading}
      onCancel={props.onCancel}
      onConfirm={props.onConfirm}
    >
      <p>
        Its configuration of every flag is deleted with it: status, percentages, targeting, attached actors and
        segments. The flags themselves stay, in the other environments. This cannot be undone; the history keeps its
        events.
      </p>
      {keys.loading ? (
        <Loading what="the keys bound to it" />
      ) : keys.error ? (
        <p>Every key bound to it is revoked.</p>
      ) : bound.length === 0 ? (
        <p>No key is bound to it.</p>
      ) : (
        <>
          <p>
            Every key bound to it is revoked: {bound.length === 1 ? "1 key" : `${bound.length} keys`}, refused (401)
            from then on.
          </p>
          <ul className="plain">
            {bound.slice(0, 10).map((k) => (
              <li key={k.id}>
                {k.name} ({k.role})
              </li>
            ))}
            {bound.length > 10 && <li>and {bound.length - 10} more</li>}
          </ul>
        </>
      )}
    </Confirm>
  );
}

function NewEnvironment(props: { environments: Environment[]; onCreated: () => void; onCancel: () => void }) {
  const { conn, project } = useApp();
  const [id, setId] = useState("");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [copyFrom, setCopyFrom] = useState("");
  const [protect, setProtect] = useState(false);
  const action = useAction();
  return (
    <form
      className="card"
      aria-labelledby="new-environment-title"
      onSubmit={async (e) => {
        e.preventDefault();
        const input = {
          id: id.trim(),
          name: name.trim(),
          ...(description.trim() ? { description: description.trim() } : {}),
          ...(copyFrom ? { copyFrom } : {}),
          ...(protect ? { protected: true } : {}),
        };
        if (await action.run(async () => void (await conn.client.environments.create(project, input))))
          props.onCreated();
      }}
    >
      <h2 id="new-environment-title">New environment</h2>
      <div className="grid2">
        <TextField
          id="environment-id"
          label="Id"
          field="id"
          value={id}
          onChange={setId}
          error={action.error}
          maxLength={PROJECT_ID_MAX_LENGTH}
          pattern={ENVIRONMENT_ID_INPUT}
          help={
            <>
              Letters, digits, <code>. _ -</code>: keys and the API name it by this, and it cannot change.
            </>
          }
          required
        />
        <TextField
          id="environment-name"
          label="Name"
          field="name"
          value={name}
          onChange={setName}
          error={action.error}
          maxLength={NAME_MAX_LENGTH}
          required
        />
        <div className="field">
          <label htmlFor="environment-copy-from">Start from</label>
          <select
            id="environment-copy-from"
            value={copyFrom}
            aria-describedby="environment-copy-from-help"
            onChange={(e) => setCopyFrom(e.target.value)}
          >
            <option value="">Every flag disabled, nothing attached</option>
            {props.environments.map((e) => (
              <option key={e.id} value={e.id}>
                A copy of {e.name}
              </option>
            ))}
          </select>
          <span id="environment-copy-from-help" className="help">
            A copy starts with that environment's configuration of every flag.
          </span>
        </div>
        <div className="field">
          <label className="check">
            <input type="checkbox" checked={protect} onChange={(e) => setProtect(e.target.checked)} /> Protected: only
            admins of this project change its configurations
          </label>
        </div>
      </div>
      <TextField
        id="environment-description"
        label="Description (optional)"
        field="description"
        value={description}
        onChange={setDescription}
        error={action.error}
        maxLength={DESCRIPTION_MAX_LENGTH}
        multiline
      />
      <ErrorText error={action.error} shownFields={["id", "name", "description"]} />
      <SubmitOrCancel label="Create environment" busy={action.busy} onCancel={props.onCancel} />
    </form>
  );
}

function EditEnvironment(props: { environment: Environment; onSaved: () => void; onCancel: () => void }) {
  const { conn, project } = useApp();
  const [name, setName] = useState(props.environment.name);
  const [description, setDescription] = useState(props.environment.description);
  const action = useAction();
  const prefix = `environment-${props.environment.id}`;
  return (
    <form
      aria-label={`Rename ${props.environment.name}`}
      onSubmit={async (e) => {
        e.preventDefault();
        const input = { name: name.trim(), description: description.trim() };
        if (
          await action.run(
            async () => void (await conn.client.environments.update(project, props.environment.id, input)),
          )
        )
          props.onSaved();
      }}
    >
      <TextField
        id={`${prefix}-new-name`}
        label="Name"
        field="name"
        value={name}
        onChange={setName}
        error={action.error}
        maxLength={NAME_MAX_LENGTH}
        required
      />
      <TextField
        id={`${prefix}-new-description`}
        label="Description"
        field="description"
        value={description}
        onChange={setDescription}
        error={action.error}
        maxLength={DESCRIPTION_MAX_LENGTH}
        multiline
      />
      <ErrorText error={action.error} shownFields={["name", "description"]} />
      <SubmitOrCancel label="Save" busy={action.busy} onCancel={props.onCancel} />
    </form>
  );
}
