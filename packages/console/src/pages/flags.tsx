import {
  DESCRIPTION_MAX_LENGTH,
  type Environment,
  FLAG_NAME_MAX_LENGTH,
  FLAG_STATUSES,
  type Flag,
  type FlagSort,
  type FlagStatus,
  type FlagType,
} from "@flagstaff/sdk";
import { useState } from "react";
import { FLAG_NAME_INPUT, PAGE_SIZE } from "../contract.js";
import {
  type Cursor,
  ErrorText,
  enc,
  Link,
  navigate,
  Pager,
  StatusBadge,
  SubmitOrCancel,
  TextField,
  useAction,
  useApp,
  useData,
} from "../ui.js";
import { ago, when } from "../format.js";
import { ListTable, NewButton } from "../lists.js";
import { Sparkline, StaleBadge } from "./usage.js";
import { targetingSummary } from "../targeting-text.js";
import { oneOf, useUrlQuery } from "../url-state.js";
import { emptyVariantRows, NewFlagTargeting, newFlagProblems, type VariantRow } from "./variants-editor.js";

const HOUR_MS = 60 * 60 * 1000;

/** What is attached to the flag, from its exact counts: "3 actors, 1 segment". */
export function attachedSummary(flag: Flag): string {
  const actors = `${flag.actorsCount.toLocaleString()} actor${flag.actorsCount === 1 ? "" : "s"}`;
  return `${actors}, ${flag.segmentsCount.toLocaleString()} segment${flag.segmentsCount === 1 ? "" : "s"}`;
}

/** Past this many environments the list shows one summary column instead of a column each. */
export const ENVIRONMENT_COLUMNS_MAX = 5;

/** A flag's status in each environment, from its `environments` map: "3 of 7 on, 2 conditional". */
export function environmentsSummary(flag: Flag, environments: readonly Environment[]): string {
  const statuses = environments.map((e) => flag.environments[e.id]?.status);
  const on = statuses.filter((s) => s === "enabled").length;
  const conditional = statuses.filter((s) => s === "conditional").length;
  return `${on} of ${environments.length} on${conditional > 0 ? `, ${conditional} conditional` : ""}`;
}

/** The orders offered, as `sort` values of the API, with their labels. */
const SORTS: [FlagSort, string][] = [
  ["name", "Name (A–Z)"],
  ["-name", "Name (Z–A)"],
  ["-createdAt", "Newest first"],
  ["createdAt", "Oldest first"],
  ["-updatedAt", "Recently updated"],
  ["updatedAt", "Least recently updated"],
  ["-latestCheckedAt", "Recently checked"],
  ["latestCheckedAt", "Least recently checked"],
];
const SORT_VALUES = SORTS.map(([value]) => value);
/** The status filter: any (""), or one of the contract's statuses. */
const STATUSES = ["", ...FLAG_STATUSES] as const;
const STATUS_WORDS: Record<FlagStatus, string> = {
  enabled: "Enabled",
  disabled: "Disabled",
  conditional: "Conditional",
};
const FIELDS = ["name", "q"] as const;
/** Which flags the list shows: those in use (not archived), the stale ones, or the archived ones. */
const SHOWS = ["", "stale", "archived"] as const;
const COUNT_POLL_MS = 30_000;

export function FlagsPage() {
  const { conn, project, environment, environments } = useApp();
  const shown = environment?.name ?? "";
  // A column per environment while they fit; past that, the one shown and a summary of all.
  const columns = environments.length <= ENVIRONMENT_COLUMNS_MAX ? environments : environment ? [environment] : [];
  const summarised = environments.length > ENVIRONMENT_COLUMNS_MAX;
  // Page, search, filters and order live in the URL: Back from a flag returns to them.
  const [query, setQuery] = useUrlQuery();
  const search = query.get("search") ?? "";
  const field = oneOf(query.get("in"), FIELDS, "name");
  const status = oneOf(query.get("status"), STATUSES, "");
  const show = oneOf(query.get("show"), SHOWS, "");
  const sort = oneOf(query.get("sort"), SORT_VALUES, "name");
  const cursor: Cursor = { after: query.get("after") ?? undefined, before: query.get("before") ?? undefined };
  const firstPage = { after: undefined, before: undefined };
  const [creating, setCreating] = useState(false);
  const filters = {
    ...(field === "name" ? { name: search || undefined } : { q: search || undefined }),
    status: status || undefined,
    ...(show === "stale" ? { stale: true } : show === "archived" ? { archived: true } : {}),
  };
  const list = useData(
    () =>
      conn.client.flags
        .list(project, { ...filters, sort: sort === "name" ? undefined : sort })
        .page({ limit: PAGE_SIZE, ...cursor }),
    [project, search, field, status, show, sort, cursor.before, cursor.after],
  );
  // The page's flags' evaluations in the last 24 hours, by hour: their sparklines.
  const names = (list.data?.data ?? []).map((f) => f.name);
  const usage = useData(
    async () => {
      if (names.length === 0) return undefined;
      const to = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + HOUR_MS;
      const range = {
        step: "hour" as const,
        from: new Date(to - 24 * HOUR_MS).toISOString(),
        to: new Date(to).toISOString(),
      };
      return conn.client.flags.usageOf(project, names, range);
    },
    [project, names.join("\n"), environment?.id],
    60_000,
  );
  // The count scans every flag that matches, so it is asked when the filters change and then every 30 s,
  // not with each 4-second poll of the page (a search in 100,000 flags would double the poll's cost).
  const count = useData(
    async () => (await conn.client.flags.list(project, { ...filters, total: true }).page({ limit: 1 })).total,
    [project, search, field, status, show],
    COUNT_POLL_MS,
  );
  const filtered = search !== "" || status !== "" || show !== "";
  const total = count.data;
  const timeColumn = sort.endsWith("createdAt") ? "Created" : sort.endsWith("updatedAt") ? "Updated" : undefined;
  const sortedBy = (column: string) => {
    const field = sort.replace(/^-/, "");
    const match =
      (column === "Name" && field === "name") ||
      (column === "Last checked" && field === "latestCheckedAt") ||
      (column === timeColumn && timeColumn !== undefined);
    if (!match) return undefined;
    return sort.startsWith("-") ? "descending" : "ascending";
  };

  return (
    <section aria-labelledby="flags-title">
      <div className="title-row">
        <h1 id="flags-title">Flags</h1>
        {total !== undefined && (
          <span className="count" data-testid="flags-total" aria-live="polite">
            {total.toLocaleString()} {total === 1 ? "flag" : "flags"}
            {filtered ? " match" : ""}
          </span>
        )}
        <NewButton label="New flag" reasonId="flags-ro" onClick={() => setCreating(true)} />
      </div>
      {creating && <NewFlag onDone={() => setCreating(false)} />}
      <search className="filters" aria-label="Flag search">
        <label>
          Search flags
          <input type="search" value={search} onChange={(e) => setQuery({ search: e.target.value, ...firstPage })} />
        </label>
        <label>
          Search in
          <select value={field} onChange={(e) => setQuery({ in: e.target.value, ...firstPage }, true)}>
            <option value="name">Name</option>
            <option value="q">Name or description</option>
          </select>
        </label>
        <label>
          Status
          <select
            value={status}
            aria-describedby="flags-environment-note"
            onChange={(e) => setQuery({ status: e.target.value, ...firstPage }, true)}
          >
            <option value="">Any status</option>
            {FLAG_STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_WORDS[s]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Show
          <select value={show} onChange={(e) => setQuery({ show: e.target.value, ...firstPage }, true)}>
            <option value="">Flags in use</option>
            <option value="stale">Stale flags</option>
            <option value="archived">Archived flags</option>
          </select>
        </label>
        <label>
          Sort by
          <select
            value={sort}
            onChange={(e) => setQuery({ sort: e.target.value === "name" ? "" : e.target.value, ...firstPage }, true)}
          >
            {SORTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </search>
      <p id="flags-environment-note" className="help">
        The status filter, the order, the targeting, what is attached and the last check are those of{" "}
        <strong>{shown}</strong>.
      </p>
      <ErrorText error={list.error} />
      <ListTable
        rows={list.data?.data}
        loading={list.loading}
        what="flags"
        empty={filtered ? "No flag matches." : "No flags yet."}
        label="Flags"
        columns={[
          <th key="name" scope="col" aria-sort={sortedBy("Name")}>
            Name
          </th>,
          ...columns.map((e) => (
            <th key={e.id} scope="col" className={e.id === environment?.id ? "environment-shown" : undefined}>
              {e.name}
              {e.id === environment?.id && environments.length > 1 && <span className="muted small"> (selected)</span>}
            </th>
          )),
          summarised && "Environments",
          "Targeting",
          "Attached",
          timeColumn && (
            <th key="time" scope="col" aria-sort={sortedBy(timeColumn)}>
              {timeColumn}
            </th>
          ),
          <th key="checked" scope="col" aria-sort={sortedBy("Last checked")}>
            Last checked
          </th>,
          "Last 24 hours",
        ]}
        row={(flag) => {
          const time = timeColumn === "Created" ? flag.createdAt : flag.updatedAt;
          return (
            <tr key={flag.id}>
              <td>
                <Link to={`/p/${enc(project)}/flags/${enc(flag.name)}`}>{flag.name}</Link>
                {flag.description && <div className="muted small">{flag.description}</div>}
              </td>
              {columns.map((e) => {
                const status = flag.environments[e.id]?.status;
                return e.id === environment?.id ? (
                  <td key={e.id} className="environment-shown">
                    <StatusBadge status={flag.status} /> <StaleBadge flag={flag} />
                    {flag.archived && <span className="badge archived">archived</span>}
                  </td>
                ) : (
                  <td key={e.id}>{status ? <StatusBadge status={status} /> : "—"}</td>
                );
              })}
              {summarised && <td>{environmentsSummary(flag, environments)}</td>}
              <td data-testid="targeting-summary">{targetingSummary(flag)}</td>
              <td>{attachedSummary(flag)}</td>
              {timeColumn && (
                <td>
                  <time dateTime={time} title={when(time)}>
                    {ago(time)}
                  </time>
                </td>
              )}
              <td>
                <time dateTime={flag.latestCheckedAt ?? undefined}>{ago(flag.latestCheckedAt)}</time>
              </td>
              <td>
                <Sparkline values={usage.data?.flags[flag.name]} label="in the last 24 hours" />
              </td>
            </tr>
          );
        }}
      />
      <Pager
        page={list.data}
        label="Flags"
        onPrevious={(before) => setQuery({ before, after: undefined }, true)}
        onNext={(after) => setQuery({ after, before: undefined }, true)}
      />
    </section>
  );
}

function NewFlag(props: { onDone: () => void }) {
  const { conn, project } = useApp();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [type, setType] = useState<FlagType>("boolean");
  const [rows, setRows] = useState<VariantRow[]>(emptyVariantRows);
  const [onVariant, setOnVariant] = useState("");
  const [offVariant, setOffVariant] = useState("");
  // Problems of the variants are shown once a create was tried, then as they are fixed.
  const [tried, setTried] = useState(false);
  const action = useAction();
  const checked = newFlagProblems(name.trim() || "new-flag", type, rows, onVariant, offVariant);
  return (
    <form
      className="card"
      aria-label="New flag"
      onSubmit={async (event) => {
        event.preventDefault();
        setTried(true);
        if (checked.problems.length > 0) return;
        const ok = await action.run(async () => {
          await conn.client.flags.create(
            project,
            name.trim(),
            type === "boolean"
              ? { description }
              : {
                  description,
                  type,
                  variants: checked.variants,
                  onVariant: checked.onVariant,
                  offVariant: checked.offVariant,
                },
          );
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
        maxLength={FLAG_NAME_MAX_LENGTH}
        pattern={FLAG_NAME_INPUT}
        value={name}
        error={action.error}
        onChange={setName}
        help={
          <>
            1–{FLAG_NAME_MAX_LENGTH} letters, digits and <code>. _ - :</code>, starting with a letter or digit; it
            cannot be changed later.
          </>
        }
      />
      <TextField
        id="new-flag-description"
        label="Description"
        field="description"
        multiline
        maxLength={DESCRIPTION_MAX_LENGTH}
        value={description}
        error={action.error}
        onChange={setDescription}
      />
      <NewFlagTargeting
        type={type}
        onType={setType}
        rows={rows}
        onRows={setRows}
        onVariant={onVariant}
        offVariant={offVariant}
        onOn={setOnVariant}
        onOff={setOffVariant}
        problems={tried ? checked.problems : []}
      />
      {tried && checked.problems.length > 0 && (
        <p className="error" role="alert">
          Not created yet: fix the {checked.problems.length === 1 ? "problem" : `${checked.problems.length} problems`}{" "}
          shown with the variants.
        </p>
      )}
      <ErrorText error={action.error} shownFields={["flagName", "description"]} />
      <SubmitOrCancel label="Create flag" busy={action.busy} onCancel={props.onDone} />
    </form>
  );
}
