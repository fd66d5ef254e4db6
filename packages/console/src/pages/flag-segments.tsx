// The flag page's Attached segments: added by name and removed one by one, each at once (a list's edit,
// recorded as its own change), not through the page's pending changes.
import type { Flag, Segment, UpdateFlagInput } from "@flagstaff/sdk";
import { useState } from "react";
import { allPages, ListRows, usePaged } from "../lists.js";
import { ErrorText, enc, navigate, Pager, useAction, useApp } from "../ui.js";

/** Every segment of the project, for adding by name (at most 100 pages). */
const SEGMENT_PAGES = 100;

export function SegmentsPanel(props: { flag: Flag; patch: (input: UpdateFlagInput) => Promise<void> }) {
  const { conn, project, canWrite, readOnlyReason } = useApp();
  const attached = usePaged(
    (page) => conn.client.segments.listForFlag(project, props.flag.name).page(page),
    [project, props.flag.name, props.flag.updatedAt],
  );
  const [name, setName] = useState("");
  const [choices, setChoices] = useState<Segment[] | undefined>(undefined);
  const action = useAction();
  const loadChoices = async () => {
    if (choices === undefined) {
      setChoices(await allPages((page) => conn.client.segments.list(project).page(page), SEGMENT_PAGES));
    }
  };
  return (
    <section className="card" aria-labelledby="flag-segments-title">
      <h2 id="flag-segments-title">Attached segments</h2>
      <form
        className="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await action.run(async () => {
            const all =
              choices ?? (await allPages((page) => conn.client.segments.list(project).page(page), SEGMENT_PAGES));
            const segment = all.find((s) => s.name === name.trim()) ?? all.find((s) => s.id === name.trim());
            if (!segment) throw new Error(`No segment is named "${name.trim()}".`);
            await props.patch({ addSegments: [segment.id] });
          });
          if (ok) {
            setName("");
            await attached.reload();
          }
        }}
      >
        <label htmlFor="add-segment">Segment name</label>
        <input
          id="add-segment"
          list="segment-names"
          value={name}
          disabled={!canWrite}
          onFocus={() => void loadChoices().catch(() => {})}
          onChange={(e) => setName(e.target.value)}
        />
        <datalist id="segment-names">
          {(choices ?? []).map((s) => (
            <option key={s.id} value={s.name} />
          ))}
        </datalist>
        <button type="submit" disabled={!canWrite || action.busy || name.trim() === ""}>
          Add segment
        </button>
      </form>
      {!canWrite && <p className="help">{readOnlyReason}</p>}
      <ErrorText error={action.error} />
      <ErrorText error={attached.error} />
      <ListRows rows={attached.data?.data} empty="No segments attached.">
        {(rows) => (
          <ul className="plain">
            {rows.map((s) => (
              <li key={s.id}>
                <a
                  href={`/console/p/${enc(project)}/segments/${enc(s.id)}`}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(`/p/${enc(project)}/segments/${enc(s.id)}`);
                  }}
                >
                  {s.name}
                </a>{" "}
                <button
                  type="button"
                  disabled={!canWrite}
                  aria-label={`Remove segment ${s.name}`}
                  onClick={async () => {
                    if (await action.run(() => props.patch({ removeSegments: [s.id] }))) await attached.reload();
                  }}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
      </ListRows>
      <Pager {...attached.paging} label="Attached segments" />
    </section>
  );
}
