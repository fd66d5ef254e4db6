// A full, searchable, paged list of actor ids (a flag's attached actors, a segment's members), with
// paste-to-add and remove. Paging is by cursor on the server, so it stays as fast at a million members.
import { type ActorMembership, isFlagstaffError, type Page, type PageOptions } from "@flagstaff/sdk";
import { useState } from "react";
import { ListTable, usePaged } from "../lists.js";
import { ErrorText, enc, Link, Pager, useAction, useApp } from "../ui.js";
import { chunks, fieldSentence, parseIds, when } from "../format.js";

/** The API takes at most 1,000 ids per addActors or removeActors. */
const BATCH = 1000;

/** What a paste adds, said before it is sent: how it was split, so "Jane Doe" is seen to be two ids. */
function preview(ids: string[]): string {
  const shown = ids.slice(0, 5).map(short).join(", ");
  const more = ids.length > 5 ? ` and ${(ids.length - 5).toLocaleString()} more` : "";
  const count = `${ids.length.toLocaleString()} id${ids.length === 1 ? "" : "s"}`;
  return `This adds ${count}: ${shown}${more}. Spaces, commas and line breaks separate ids.`;
}

/** An id as quoted in a message: at most 40 characters. */
function short(id: string): string {
  return id.length > 40 ? `${id.slice(0, 40)}…` : id;
}

const ordinal = (n: number) => {
  const [tens, ones] = [n % 100, n % 10];
  const suffix = tens >= 11 && tens <= 13 ? "th" : ones === 1 ? "st" : ones === 2 ? "nd" : ones === 3 ? "rd" : "th";
  return `${n.toLocaleString()}${suffix}`;
};

/**
 * The API names a refused id by its place in the batch (`/addActors/4`); the person pasted ids, so the
 * message names the id itself and its place in what was pasted.
 */
function nameBadIds(error: unknown, batch: string[], offset: number): unknown {
  if (!isFlagstaffError(error) || error.errors.length === 0) return error;
  const sentences = error.errors.map((e) => {
    const index = /^\/(?:add|remove)Actors\/(\d+)$/.exec(e.path)?.[1];
    const id = index === undefined ? undefined : batch[Number(index)];
    if (id === undefined) return fieldSentence(e.path, e.message);
    return fieldSentence(e.path, e.message, `The actor id "${short(id)}" (the ${ordinal(offset + Number(index) + 1)})`);
  });
  return new Error(`${sentences.join(" ")} Nothing was added from this batch; fix the id and add again.`);
}

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
  const { project, canWrite, readOnlyReason } = useApp();
  const [q, setQ] = useState("");
  const [paste, setPaste] = useState("");
  const [added, setAdded] = useState<string | undefined>(undefined);
  const list = usePaged((page) => props.load(q || undefined, page), [q], { limit: 50 });
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
            for (const [i, batch] of chunks(ids, BATCH).entries()) {
              try {
                await props.add(batch);
              } catch (error) {
                throw nameBadIds(error, batch, i * BATCH);
              }
            }
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
          aria-describedby={`${props.id}-paste-help${paste.trim() === "" ? "" : ` ${props.id}-paste-preview`}`}
        />
        <span id={`${props.id}-paste-help`} className="help">
          {canWrite
            ? "Paste actor ids: one per line, or separated by commas or spaces (so an id cannot hold a space). Hundreds at once are fine."
            : readOnlyReason}
        </span>
        {paste.trim() !== "" && (
          <p className="help" id={`${props.id}-paste-preview`} aria-live="polite">
            {preview(parseIds(paste))}
          </p>
        )}
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
              list.first();
            }}
          />
        </label>
      </search>
      <ErrorText error={list.error} />
      <ErrorText error={removeAction.error} />
      <ListTable
        rows={list.data?.data}
        loading={list.loading}
        what={`${props.noun}s`}
        empty={q ? `No ${props.noun} matches.` : `No ${props.noun}s.`}
        label={props.title}
        columns={["Actor id", "Added"]}
        actions
        row={(m) => (
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
                title={canWrite ? undefined : readOnlyReason}
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
        )}
      />
      <Pager {...list.paging} label={props.title} />
    </section>
  );
}
