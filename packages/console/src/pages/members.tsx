// A full, searchable, paged list of actor ids (a flag's attached actors, a segment's members), with
// paste-to-add and remove. Paging is by cursor on the server, so it stays as fast at a million members.
import type { ActorMembership, Page, PageOptions } from "@flagstaff/sdk";
import { useState } from "react";
import {
  chunks,
  type Cursor,
  ErrorText,
  enc,
  Link,
  Loading,
  Pager,
  parseIds,
  READ_ONLY_REASON,
  useAction,
  useApp,
  useData,
  when,
} from "../ui.js";

/** The API takes at most 1,000 ids per addActors or removeActors. */
const BATCH = 1000;

export function MembersPanel(props: {
  id: string;
  title: string;
  noun: string;
  count: number | undefined;
  /** One page of `flags.actors` or `segments.actors`, searched by `q`. */
  load: (q: string | undefined, page: PageOptions) => Promise<Page<ActorMembership>>;
  add: (ids: string[]) => Promise<void>;
  remove: (id: string) => Promise<void>;
  /** Called after a change, so the page reloads its counts. */
  changed: () => void;
}) {
  const { project, canWrite } = useApp();
  const [q, setQ] = useState("");
  const [cursor, setCursor] = useState<Cursor>({});
  const [paste, setPaste] = useState("");
  const [added, setAdded] = useState<string | undefined>(undefined);
  const list = useData(() => props.load(q || undefined, { limit: 50, ...cursor }), [q, cursor.before, cursor.after]);
  const addAction = useAction();
  const removeAction = useAction();
  const [removing, setRemoving] = useState<string | undefined>(undefined);
  const headingId = `${props.id}-title`;

  return (
    <section aria-labelledby={headingId} className="card">
      <h2 id={headingId}>
        {props.title}
        {props.count !== undefined && <span className="count"> ({props.count.toLocaleString()})</span>}
      </h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const ids = parseIds(paste);
          if (ids.length === 0) return;
          setAdded(undefined);
          const ok = await addAction.run(async () => {
            for (const batch of chunks(ids, BATCH)) await props.add(batch);
          });
          if (ok) {
            setPaste("");
            setAdded(`Added ${ids.length.toLocaleString()} ${props.noun}${ids.length === 1 ? "" : "s"}.`);
            props.changed();
            await list.reload();
          }
        }}
      >
        <label htmlFor={`${props.id}-paste`}>Add {props.noun}s</label>
        <textarea
          id={`${props.id}-paste`}
          rows={3}
          value={paste}
          disabled={!canWrite}
          onChange={(e) => setPaste(e.target.value)}
          aria-describedby={`${props.id}-paste-help`}
        />
        <span id={`${props.id}-paste-help`} className="help">
          {canWrite
            ? "Paste actor ids: one per line, or separated by commas or spaces. Hundreds at once are fine."
            : READ_ONLY_REASON}
        </span>
        <ErrorText error={addAction.error} />
        {added && <p role="status">{added}</p>}
        <button type="submit" disabled={!canWrite || addAction.busy}>
          Add
        </button>
      </form>
      <search className="filters" aria-label={`Search ${props.title.toLowerCase()}`}>
        <label>
          Search {props.noun}s
          <input
            type="search"
            value={q}
            onChange={(e) => {
              setQ(e.target.value);
              setCursor({});
            }}
          />
        </label>
      </search>
      <ErrorText error={list.error} />
      <ErrorText error={removeAction.error} />
      {list.data === undefined && list.loading && <Loading what={`${props.noun}s`} />}
      {list.data && list.data.data.length === 0 && <p>{q ? `No ${props.noun} matches.` : `No ${props.noun}s.`}</p>}
      {list.data && list.data.data.length > 0 && (
        <table aria-label={props.title}>
          <thead>
            <tr>
              <th scope="col">Actor id</th>
              <th scope="col">Added</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((m) => (
              <tr key={m.actorId}>
                <td>
                  <Link to={`/p/${enc(project)}/actors/${enc(m.actorId)}`}>{m.actorId}</Link>
                </td>
                <td>{when(m.addedAt)}</td>
                <td>
                  <button
                    type="button"
                    disabled={!canWrite || removing === m.actorId}
                    aria-label={`Remove ${m.actorId}`}
                    title={canWrite ? undefined : READ_ONLY_REASON}
                    onClick={async () => {
                      setRemoving(m.actorId);
                      const ok = await removeAction.run(() => props.remove(m.actorId));
                      setRemoving(undefined);
                      if (ok) {
                        props.changed();
                        await list.reload();
                      }
                    }}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager
        page={list.data}
        label={props.title}
        onPrevious={(before) => setCursor({ before })}
        onNext={(after) => setCursor({ after })}
      />
    </section>
  );
}
