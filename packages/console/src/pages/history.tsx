import type { EventTypeFilter } from "@flagstaff/sdk";
import { useState } from "react";
import { ListRows, usePaged } from "../lists.js";
import { ErrorText, enc, Link, Pager, useApp } from "../ui.js";
import { useUrlQuery } from "../url-state.js";
import { actorLabel, EventList } from "./events.js";

/** The filters offered, any ("") first: the contract's (EVENT_TYPE_FILTERS) most asked for. */
const TYPES: readonly ("" | EventTypeFilter)[] = [
  "",
  "flag.",
  "segment.",
  "actor.",
  "key.",
  "project.",
  "webhook.",
  "access.",
  "flag.created",
  "flag.updated",
  "flag.deleted",
];

export function HistoryPage() {
  const { conn, project, environments, session } = useApp();
  const [type, setType] = useState("");
  // The history belongs to the project: every environment's events, and those of none (a segment, a key…).
  // One environment's only is the API's `environment` filter.
  const [environment, setEnvironment] = useState("");
  const bound = Boolean(session.environment);
  const filtered = environments.find((e) => e.id === environment);
  const [flag, setFlag] = useState("");
  const [since, setSince] = useState("");
  // One person's (or key's) changes: in the URL, so that the name in a row links here.
  const [query] = useUrlQuery();
  const actor = query.get("actor") || undefined;
  const sinceIso = since ? new Date(since).toISOString() : undefined;
  const events = usePaged(
    (page) =>
      conn.client.events
        .list(project, {
          type: type || undefined,
          flag: flag.trim() || undefined,
          since: sinceIso,
          actor,
          environment: environment || undefined,
        })
        .page(page),
    [project, type, flag, sinceIso, actor, environment],
    { limit: 25 },
  );
  const [actorCursor, setActorCursor] = useState(actor);
  if (actorCursor !== actor) {
    // Another actor's link: their changes from the first page.
    setActorCursor(actor);
    events.first();
  }
  const first = events.data?.data[0];
  const reset = events.first;
  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <search className="filters" aria-label="Filter the history">
        <label>
          Type
          <select
            value={type}
            onChange={(e) => {
              setType(e.target.value);
              reset();
            }}
          >
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t === "" ? "Every type" : t.endsWith(".") ? `every ${t.slice(0, -1)} event` : t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Environment
          <select
            value={environment}
            aria-describedby="history-environment-help"
            onChange={(e) => {
              setEnvironment(e.target.value);
              reset();
            }}
          >
            {/* Short words (the help under the filters says what each shows): a select is cut on a phone. */}
            <option value="">All</option>
            {environments.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Flag name
          <input
            value={flag}
            onChange={(e) => {
              setFlag(e.target.value);
              reset();
            }}
          />
        </label>
        <label>
          Since
          <input
            type="datetime-local"
            value={since}
            onChange={(e) => {
              setSince(e.target.value);
              reset();
            }}
          />
        </label>
      </search>
      <p id="history-environment-help" className="help">
        {filtered
          ? `${filtered.name}'s events only: its flags' configuration changes (copies into it included) and its own events. Those that belong to no environment (a flag created or deleted, segments, keys…) are left out.`
          : bound
            ? `This key is bound to ${environments[0]?.name ?? "one environment"}: the history shows its events and those that belong to no environment (—).`
            : "Every environment's events, and those that belong to none (—: a flag created or deleted, segments, keys…)."}
      </p>
      {actor && (
        <p className="filter-chip" role="status">
          Changes by <strong>{first ? actorLabel(first.actor) : actor}</strong>
          {first && "email" in first.actor && typeof first.actor.email === "string" ? ` (${first.actor.email})` : ""}{" "}
          <Link to={`/p/${enc(project)}/history`}>Show everyone's changes</Link>
        </p>
      )}
      <ErrorText error={events.error} />
      <ListRows rows={events.data?.data} loading={events.loading} what="the history" empty="No events match.">
        {(rows) => <EventList events={rows} />}
      </ListRows>
      <Pager {...events.paging} label="History" />
    </section>
  );
}
