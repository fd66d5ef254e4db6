import type { Flag } from "@flagstaff/sdk";
import { useState } from "react";
import {
  ago,
  type Cursor,
  ErrorText,
  enc,
  Link,
  Loading,
  navigate,
  Pager,
  READ_ONLY_REASON,
  StatusBadge,
  TextField,
  useAction,
  useApp,
  useData,
} from "../ui.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const STALE_DAYS = 30;

/** Why a flag looks stale, or undefined: not checked for 30 days, or fully on or off for 30 days. */
export function staleReason(flag: Flag, now = Date.now()): string | undefined {
  const limit = now - STALE_DAYS * DAY_MS;
  const checked = flag.latestCheckedAt ?? flag.createdAt;
  if (Date.parse(checked) < limit) {
    return flag.latestCheckedAt === null ? "never checked in 30 days" : "not checked for 30 days";
  }
  if (flag.status !== "conditional" && Date.parse(flag.statusChangedAt) < limit) {
    return `fully ${flag.status === "enabled" ? "on" : "off"} for 30 days`;
  }
  return undefined;
}

/** What is attached to the flag, from its exact counts: "3 actors, 1 segment". */
export function attachedSummary(flag: Flag): string {
  const actors = `${flag.actorsCount.toLocaleString()} actor${flag.actorsCount === 1 ? "" : "s"}`;
  return `${actors}, ${flag.segmentsCount.toLocaleString()} segment${flag.segmentsCount === 1 ? "" : "s"}`;
}

export function rolloutSummary(flag: Flag): string {
  if (flag.status === "enabled") return "On for everyone";
  if (flag.status === "disabled") return "Off for everyone";
  const parts: string[] = [];
  parts.push(`${flag.percentageActors}% of actors`);
  if (flag.percentageCalls > 0) parts.push(`${flag.percentageCalls}% of calls`);
  return parts.join(", ");
}

export function FlagsPage() {
  const { conn, project, canWrite } = useApp();
  const [search, setSearch] = useState("");
  const [field, setField] = useState<"name" | "q">("name");
  const [cursor, setCursor] = useState<Cursor>({});
  const [creating, setCreating] = useState(false);
  const list = useData(
    () =>
      conn.client.flags
        .list(project, field === "name" ? { name: search || undefined } : { q: search || undefined })
        .page({ limit: 20, ...cursor }),
    [project, search, field, cursor.before, cursor.after],
  );

  return (
    <section aria-labelledby="flags-title">
      <div className="title-row">
        <h1 id="flags-title">Flags</h1>
        <button
          type="button"
          className="primary"
          disabled={!canWrite}
          aria-describedby={canWrite ? undefined : "flags-ro"}
          onClick={() => setCreating(true)}
        >
          New flag
        </button>
        {!canWrite && (
          <span id="flags-ro" className="help">
            {READ_ONLY_REASON}
          </span>
        )}
      </div>
      {creating && <NewFlag onDone={() => setCreating(false)} />}
      <search className="filters" aria-label="Flag search">
        <label>
          Search flags
          <input
            type="search"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value);
              setCursor({});
            }}
          />
        </label>
        <label>
          Search in
          <select
            value={field}
            onChange={(e) => {
              setField(e.target.value as "name" | "q");
              setCursor({});
            }}
          >
            <option value="name">Name</option>
            <option value="q">Name or description</option>
          </select>
        </label>
      </search>
      <ErrorText error={list.error} />
      {list.data === undefined && list.loading ? (
        <Loading what="flags" />
      ) : list.data && list.data.data.length === 0 ? (
        <p>{search ? "No flag matches." : "No flags yet."}</p>
      ) : (
        list.data && (
          <table aria-label="Flags">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Rollout</th>
                <th scope="col">Attached</th>
                <th scope="col">Last checked</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((flag) => {
                const stale = staleReason(flag);
                return (
                  <tr key={flag.id}>
                    <td>
                      <Link to={`/p/${enc(project)}/flags/${enc(flag.name)}`}>{flag.name}</Link>
                      {flag.description && <div className="muted small">{flag.description}</div>}
                    </td>
                    <td>
                      <StatusBadge status={flag.status} />{" "}
                      {stale && (
                        <span className="badge stale" title={stale}>
                          stale<span className="visually-hidden">: {stale}</span>
                        </span>
                      )}
                    </td>
                    <td>{rolloutSummary(flag)}</td>
                    <td>{attachedSummary(flag)}</td>
                    <td>
                      <time dateTime={flag.latestCheckedAt ?? undefined}>{ago(flag.latestCheckedAt)}</time>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )
      )}
      <Pager
        page={list.data}
        label="Flags"
        onPrevious={(before) => setCursor({ before })}
        onNext={(after) => setCursor({ after })}
      />
    </section>
  );
}

/** A flag name as the server checks it (schemas.ts: Limits.flagName), so the browser says so before sending. */
const FLAG_NAME_PATTERN = "[A-Za-z0-9][A-Za-z0-9._:\\-]{0,127}";

function NewFlag(props: { onDone: () => void }) {
  const { conn, project } = useApp();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const action = useAction();
  return (
    <form
      className="card"
      aria-label="New flag"
      onSubmit={async (event) => {
        event.preventDefault();
        const ok = await action.run(async () => {
          await conn.client.flags.create(project, name.trim(), { description });
        });
        if (ok) navigate(`/p/${enc(project)}/flags/${enc(name.trim())}`);
      }}
    >
      <h2>New flag</h2>
      <TextField
        id="new-flag-name"
        label="Name"
        field="flagName"
        required
        maxLength={128}
        pattern={FLAG_NAME_PATTERN}
        value={name}
        error={action.error}
        onChange={setName}
        help={
          <>
            1–128 letters, digits and <code>. _ - :</code>, starting with a letter or digit; it cannot be changed later.
          </>
        }
      />
      <TextField
        id="new-flag-description"
        label="Description"
        field="description"
        multiline
        maxLength={1024}
        value={description}
        error={action.error}
        onChange={setDescription}
      />
      <ErrorText error={action.error} shownFields={["flagName", "description"]} />
      <div className="row">
        <button type="submit" className="primary" disabled={action.busy}>
          Create flag
        </button>
        <button type="button" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
