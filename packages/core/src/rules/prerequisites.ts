import type { FlagType } from "../contract/enums.js";
import { PREREQUISITE_DEPTH_MAX } from "../contract/limits.js";

/** What the prerequisite checks need to know of the environment's other flags. */
export interface PrerequisiteNode {
  readonly name: string;
  readonly type?: FlagType;
  readonly variants?: readonly { readonly key: string }[];
  readonly prerequisites?: readonly { readonly flag: string }[];
}

/** A cycle or an over-long chain, at the index of the flag's prerequisite it goes through. */
export interface GraphProblem {
  readonly code: "prerequisite_cycle" | "prerequisite_depth";
  readonly index: number;
  readonly message: string;
}

/**
 * Cycles and chains deeper than PREREQUISITE_DEPTH_MAX that the flag `name`, with its new `prerequisites`,
 * would be part of, among the environment's `flags` (each flag's prerequisites are edges; a listed flag
 * missing from `flags` is a dead end). A chain's depth counts edges: a → b is 1. The chains that pass
 * through `name` are all this write can lengthen: the longest is the longest way into it plus the
 * longest way out of it.
 */
export function prerequisiteGraphProblems(
  name: string,
  prerequisites: readonly { readonly flag: string }[],
  flags: ReadonlyMap<string, PrerequisiteNode>,
): GraphProblem[] {
  const edges = (flag: string): readonly string[] =>
    flag === name ? prerequisites.map((p) => p.flag) : (flags.get(flag)?.prerequisites ?? []).map((p) => p.flag);

  // Out of `name`: a cycle back to it, or the longest chain down.
  const onPath: string[] = [];
  const longestDown = new Map<string, string[]>();
  let cycle: { readonly flags: string[]; readonly via: string } | null = null;
  const down = (flag: string): string[] => {
    const known = longestDown.get(flag);
    if (known) return known;
    onPath.push(flag);
    let best: string[] = [flag];
    for (const next of edges(flag)) {
      if (cycle) break;
      const seenAt = onPath.indexOf(next);
      if (seenAt >= 0) {
        // `via`: the prerequisite of `name` this walk went down, where the problem is reported.
        cycle = { flags: [...onPath.slice(seenAt), next], via: onPath[1] ?? next };
        break;
      }
      const chain = down(next);
      if (chain.length + 1 > best.length) best = [flag, ...chain];
    }
    onPath.pop();
    longestDown.set(flag, best);
    return best;
  };
  const chainDown = down(name);
  const indexOf = (next: string | undefined) =>
    Math.max(
      0,
      prerequisites.findIndex((p) => p.flag === next),
    );
  // TypeScript cannot see the assignment inside `down`.
  const found = cycle as { readonly flags: string[]; readonly via: string } | null;
  if (found !== null) {
    // A cycle through `name` starts from it (the walk did); one further down is refused too, as evaluation
    // of `name` would run into it.
    return [
      {
        code: "prerequisite_cycle",
        index: indexOf(found.via),
        message: `prerequisites form a cycle: ${found.flags.join(" → ")}`,
      },
    ];
  }

  // Into `name`: the longest chain of flags that (through their prerequisites) lead to it.
  const parents = new Map<string, string[]>();
  for (const flag of [...flags.keys(), name]) {
    for (const next of edges(flag)) {
      if (!parents.has(next)) parents.set(next, []);
      if (!parents.get(next)?.includes(flag)) parents.get(next)?.push(flag);
    }
  }
  const longestUp = new Map<string, string[]>();
  const upPath = new Set<string>();
  const up = (flag: string): string[] => {
    const known = longestUp.get(flag);
    if (known) return known;
    upPath.add(flag);
    let best: string[] = [flag];
    for (const parent of parents.get(flag) ?? []) {
      if (upPath.has(parent)) continue; // a cycle elsewhere, not through `name`: not this write's
      const chain = up(parent);
      if (chain.length + 1 > best.length) best = [...chain, flag];
    }
    upPath.delete(flag);
    longestUp.set(flag, best);
    return best;
  };
  const chain = [...up(name), ...chainDown.slice(1)];
  const depth = chain.length - 1;
  if (depth > PREREQUISITE_DEPTH_MAX && chainDown.length > 1) {
    return [
      {
        code: "prerequisite_depth",
        index: indexOf(chainDown[1]),
        message: `the chain ${chain.join(" → ")} is ${depth} prerequisites deep; at most ${PREREQUISITE_DEPTH_MAX} are allowed`,
      },
    ];
  }
  return [];
}
