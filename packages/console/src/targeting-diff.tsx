// Changes to a flag's targeting as people read them, rule by rule: what Copy to… would change. Built on
// targeting-text.ts; a component of its own so any page can show a diff.
import { isFlagstaffError } from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import type { Change, ChangeKind, SegmentNamer } from "./targeting-text.js";
import { useApp } from "./ui.js";

const KIND_LABELS: Record<ChangeKind, string> = {
  added: "Added",
  removed: "Removed",
  changed: "Changed",
  moved: "Moved",
};

/**
 * A list of changes: each with its kind (Added, Removed, Changed, Moved), what it is about, and its text
 * (before and after for a change). `label` names the list for screen readers ("Rules: what changes").
 */
export function ChangeList(props: { changes: readonly Change[]; label: string }) {
  return (
    <ul className="changes" aria-label={props.label}>
      {props.changes.map((c) => (
        <li key={`${c.kind} ${c.subject}`} data-change={c.kind}>
          <span className={`badge change-${c.kind}`}>{KIND_LABELS[c.kind]}</span> <strong>{c.subject}</strong>
          {c.kind === "changed" ? (
            <>
              <span className="change-text">
                <span className="change-side">Before:</span> <del>{c.before}</del>
              </span>
              <span className="change-text">
                <span className="change-side">After:</span> <ins>{c.after}</ins>
              </span>
            </>
          ) : c.kind === "removed" ? (
            <span className="change-text">
              <del>{c.before}</del>
            </span>
          ) : c.kind === "added" ? (
            <span className="change-text">
              <ins>{c.after}</ins>
            </span>
          ) : (
            <span className="change-text">{c.after}</span>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * Names of segments by id, fetched once each (GET …/segments/{id}); a deleted one is named from its id.
 * A segment renamed meanwhile shows its current name: the id is what a configuration or an event holds.
 */
export function useSegmentNames(ids: readonly string[]): SegmentNamer {
  const { conn, project } = useApp();
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const key = [...new Set(ids)].sort().join(" ");
  useEffect(() => {
    const missing = key === "" ? [] : key.split(" ").filter((id) => !names.has(id));
    if (missing.length === 0) return;
    let live = true;
    void Promise.all(
      missing.map(async (id): Promise<[string, string]> => {
        try {
          return [id, (await conn.client.segments.get(project, id)).name];
        } catch (error) {
          return [id, isFlagstaffError(error) && error.status === 404 ? `${id} (deleted)` : id];
        }
      }),
    ).then((found) => {
      if (live) setNames((previous) => new Map([...previous, ...found]));
    });
    return () => {
      live = false;
    };
  }, [project, key]);
  return (id) => names.get(id) ?? id;
}
