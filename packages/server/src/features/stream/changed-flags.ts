import type { ProjectState } from "@flagstaff/core";
import type { ChangeSet } from "../../write-path/changes.js";

/** Past this many names a refetch message names none: the client refetches everything anyway. */
export const CHANGED_FLAGS_MAX = 100;

/**
 * The names of the flags whose answers a change set may have changed in one environment (its state after
 * the set was applied), for OFREP's `refetchEvaluation` message: the flags it configured, and every flag
 * that reaches one of them through its prerequisites. Undefined when that cannot be told by name or the
 * list would be long: a flag deleted (its name is gone with it), a segment changed (any flag may read it),
 * or more than CHANGED_FLAGS_MAX flags.
 */
export function changedFlags(set: ChangeSet, state: ProjectState, environment: string): string[] | undefined {
  const changed = new Set<string>();
  for (const change of set.changes) {
    const of = (change as { environment?: string }).environment;
    if (of !== undefined && of !== environment) continue;
    if (change.kind === "flag.upserted") changed.add(change.flag.name);
    else if (change.kind === "flag.variants") {
      const name = state.flagsById.get(change.id)?.name;
      if (name === undefined) return undefined;
      changed.add(name);
    } else if (change.kind === "flag.deleted" || change.kind.startsWith("segment.")) return undefined;
  }
  // Flags gated on a changed flag, to any depth (the validator keeps chains short and acyclic).
  const gated = [...state.flagsById.values()].filter((flag) => flag.prerequisites.length > 0);
  let grew = gated.length > 0;
  while (grew && changed.size <= CHANGED_FLAGS_MAX) {
    grew = false;
    for (const flag of gated) {
      if (changed.has(flag.name)) continue;
      if (flag.prerequisites.some((p) => changed.has(p.flag))) {
        changed.add(flag.name);
        grew = true;
      }
    }
  }
  return changed.size > CHANGED_FLAGS_MAX ? undefined : [...changed].sort();
}
