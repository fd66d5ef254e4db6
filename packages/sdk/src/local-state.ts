import {
  dependenciesOf,
  type FlagState,
  isProjectChange,
  type ProjectChange,
  ProjectState,
  type ProjectStateJSON,
  READABLE_STATE_FORMATS,
} from "@flagstaff/core";
import type { StreamMessage } from "./event-stream.js";

// What the local evaluator makes of the stream's events: a snapshot read into a ProjectState, the changes
// applied to it, and which flags each may make answer differently (the `change` event's list), by
// comparing snapshots and by reading the changes before they are applied.

/**
 * An error that stops the evaluator: a state format or a change kind this SDK does not know (a newer
 * server's). The evaluator stops with code `unsupported_format` and this message, which says to upgrade.
 */
export class FatalStreamError extends Error {
  override readonly name = "FatalStreamError";
}

/** Everything evaluation sees of one flag (but its prerequisites' flags), as text, to tell which flags a fresh snapshot changed. */
function signature(state: ProjectState, flag: FlagState): string {
  const sorted = (values: Iterable<string>) => [...values].sort().join("\u0001");
  const segments = [...dependenciesOf(flag).segments]
    .sort()
    .map(
      (id) =>
        `${id}=${sorted(state.segmentMembers.get(id) ?? [])}:${JSON.stringify(state.segmentConditions(id) ?? [])}`,
    )
    .join("\u0002");
  const targeting = JSON.stringify([
    flag.type,
    flag.variants,
    flag.onVariant,
    flag.offVariant,
    flag.rules,
    flag.prerequisites,
  ]);
  return [flag.status, flag.percentageActors, flag.percentageCalls, sorted(flag.actors), segments, targeting].join(
    "\u0003",
  );
}

/** Names of the flags that answer differently in `after` than in `before`, prerequisites' dependents included. */
export function changedFlags(before: ProjectState, after: ProjectState): string[] {
  const out: string[] = [];
  for (const [name, flag] of after.flagsByName) {
    const old = before.flagsByName.get(name);
    if (!old || old.id !== flag.id || signature(before, old) !== signature(after, flag)) out.push(name);
  }
  const gone = [...before.flagsByName.keys()].filter((name) => !after.flagsByName.has(name));
  return [...new Set([...withDependents(after, out), ...gone])].sort();
}

function parseData(message: StreamMessage): Record<string, unknown> {
  const data: unknown = JSON.parse(message.data);
  if (typeof data !== "object" || data === null || typeof (data as { version?: unknown }).version !== "number") {
    throw new Error(`a ${message.event} event without a version`);
  }
  return data as Record<string, unknown>;
}

/** A list in words: "1, 2 and 3". */
const inWords = (items: readonly number[]): string =>
  items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;

/** A snapshot event read: the project's state and its version. Throws FatalStreamError on a format this SDK cannot read. */
export function readSnapshot(message: StreamMessage): { state: ProjectState; version: number } {
  const data = parseData(message);
  const json = data.state as ProjectStateJSON;
  const format = (json as { format?: unknown } | undefined)?.format;
  if (typeof format !== "number" || !READABLE_STATE_FORMATS.includes(format)) {
    throw new FatalStreamError(
      `The stream sent a project state of format ${JSON.stringify(format)}; this @flagstaff/sdk reads formats ` +
        `${inWords(READABLE_STATE_FORMATS)} only. Upgrade @flagstaff/sdk to a version that reads format ${JSON.stringify(format)}.`,
    );
  }
  let state: ProjectState;
  try {
    state = ProjectState.fromJSON(json);
  } catch (error) {
    throw new FatalStreamError(
      `The stream sent a state this SDK cannot read (${error instanceof Error ? error.message : String(error)}); update @flagstaff/sdk.`,
    );
  }
  return { state, version: data.version as number };
}

/**
 * Applies a change event to `state` (at `version`): answers its version and the names of the flags that
 * may answer differently, sorted; undefined for an event at or before `version` (nothing is applied).
 * Throws on a change it cannot read (FatalStreamError for a kind this SDK does not know).
 */
export function applyChanges(
  state: ProjectState,
  version: number,
  message: StreamMessage,
): { version: number; flags: string[] } | undefined {
  const data = parseData(message);
  const next = data.version as number;
  if (next <= version) return undefined;
  const changes = data.changes as { kind: string }[];
  if (!Array.isArray(changes)) throw new Error("a change event without changes");
  const unknown = changes.find((change) => !isProjectChange(change));
  if (unknown) {
    throw new FatalStreamError(
      `The stream sent a change of kind ${JSON.stringify(unknown.kind)}, which this SDK does not know; update @flagstaff/sdk.`,
    );
  }
  const flags = new Set<string>();
  for (const change of changes as ProjectChange[]) {
    const touched = flagsTouched(state, change);
    if (state.apply(change)) for (const name of touched) flags.add(name);
  }
  return { version: next, flags: [...flags].sort() };
}

/** The flags a change may make answer differently, read before it is applied. */
function flagsTouched(state: ProjectState, change: ProjectChange): string[] {
  switch (change.kind) {
    case "flag.upserted":
      return withDependents(state, [change.flag.name]);
    case "flag.deleted":
    case "flag.variants":
    case "flag.rollout": {
      const name = state.flagsById.get(change.id)?.name;
      return name === undefined ? [] : withDependents(state, [name]);
    }
    case "segment.members":
    case "segment.deleted":
    case "segment.conditions": {
      const segmentId = change.segmentId;
      const named = [...state.flagsById.values()]
        .filter((flag) => dependenciesOf(flag).segments.includes(segmentId))
        .map((flag) => flag.name);
      return withDependents(state, named);
    }
  }
}

/** The flags named and every flag that has one of them as a prerequisite, directly or through others. */
function withDependents(state: ProjectState, names: readonly string[]): string[] {
  const found = new Set(names);
  let grew = true;
  while (grew) {
    grew = false;
    for (const flag of state.flagsById.values()) {
      if (!found.has(flag.name) && dependenciesOf(flag).flags.some((name) => found.has(name))) {
        found.add(flag.name);
        grew = true;
      }
    }
  }
  return [...found];
}
