// Changes to a flag's targeting as people read them, rule by rule: what Copy to… would change and what the
// history recorded. Built on targeting-text.ts; a component of its own so any page can show a diff.
import { isFlagstaffError } from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import {
  type Change,
  type ChangeKind,
  type Prerequisite,
  prerequisiteChanges,
  type Rule,
  ruleChanges,
  type SegmentNamer,
  type Variant,
  variantChanges,
} from "./targeting-text.js";
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

/** The parts of a configuration (and of the flag's definition) whose changes are listed one by one. */
export interface TargetingLists {
  rules?: readonly Rule[];
  prerequisites?: readonly Prerequisite[];
  variants?: readonly Variant[];
}

/** One group of changes: "Rules", with the counts before and after, and the changes one by one. */
export interface ChangeGroup {
  what: "Rules" | "Prerequisites" | "Variants";
  before: number;
  after: number;
  changes: Change[];
}

/**
 * The changes between two configurations' lists, by group; a group whose list is absent on either side
 * (an event recorded before targeting existed) or that did not change is left out.
 */
export function listChanges(before: TargetingLists, after: TargetingLists, segmentName: SegmentNamer): ChangeGroup[] {
  const out: ChangeGroup[] = [];
  const group = <T,>(
    what: ChangeGroup["what"],
    a: readonly T[] | undefined,
    b: readonly T[] | undefined,
    diff: (a: readonly T[], b: readonly T[]) => Change[],
  ) => {
    if (!Array.isArray(a) || !Array.isArray(b)) return;
    const changes = diff(a, b);
    if (changes.length > 0) out.push({ what, before: a.length, after: b.length, changes });
  };
  group("Rules", before.rules, after.rules, (a, b) => ruleChanges(a, b, segmentName));
  group("Prerequisites", before.prerequisites, after.prerequisites, prerequisiteChanges);
  group("Variants", before.variants, after.variants, variantChanges);
  return out;
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
