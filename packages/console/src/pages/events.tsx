// The history as people read it: field labels instead of property names, segment names instead of ids,
// rules, prerequisites and variants one by one in words, and the changed thing as a link to its page.
import type { FlagstaffEvent } from "@flagstaff/sdk";
import { ChangeList, type ChangeGroup, listChanges, type TargetingLists, useSegmentNames } from "../targeting-diff.js";
import { howMany, ruleSegmentIds, type Rule, type SegmentNamer } from "../targeting-text.js";
import { enc, Link, useApp } from "../ui.js";
import { when } from "../format.js";

/** What each recorded property is called on the console's own forms. */
const LABELS: Record<string, string> = {
  name: "Name",
  description: "Description",
  status: "Status",
  percentageActors: "Percentage of actors",
  percentageCalls: "Percentage of calls",
  onVariant: "On variant",
  offVariant: "Off variant",
  url: "URL",
  events: "Events",
  enabled: "Enabled",
  disabledReason: "Turned off because",
  imageURL: "Image URL",
  role: "Role",
};

const LISTS: [key: string, label: string, segments: boolean][] = [
  ["addedActors", "Actors added", false],
  ["removedActors", "Actors removed", false],
  ["addedSegments", "Segments added", true],
  ["removedSegments", "Segments removed", true],
];

/** A value as a person reads it: yes/no, lists joined, nothing as "—". */
function show(value: unknown): string {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.map(String).join(", ");
  return String(value);
}

/** Ids shown as at most five, then the count. */
function few(items: string[]): string {
  return items.length > 5 ? `${items.slice(0, 5).join(", ")} … (${items.length})` : items.join(", ");
}

/** The lines of one event's change, with segment ids named by `segmentName`, environments by `environmentName`. */
export function describeChange(
  e: FlagstaffEvent,
  segmentName: (id: string) => string,
  environmentName: (id: string) => string = (id) => id,
): string[] {
  if (e.before === null) return ["created"];
  if (e.after === null) return ["deleted"];
  const before = e.before;
  const after = e.after;
  const parts: string[] = [];
  // A copy between environments (POST …/flags/{flag}/copy) says where the configuration came from.
  if (typeof after.copiedFrom === "string") parts.push(`Copied from ${environmentName(after.copiedFrom)}`);
  for (const [key, label] of Object.entries(LABELS)) {
    if (key in after && JSON.stringify(before[key]) !== JSON.stringify(after[key])) {
      parts.push(`${label}: ${show(before[key])} → ${show(after[key])}`);
    }
  }
  for (const [key, label, segments] of LISTS) {
    const ids = after[key];
    if (Array.isArray(ids) && ids.length > 0) {
      parts.push(`${label}: ${few(ids.map((id) => (segments ? segmentName(String(id)) : String(id))))}`);
    }
  }
  return parts;
}

/** Segment ids of the events' segment lists, and of the segments their rules name. */
function segmentIds(events: readonly FlagstaffEvent[]): string[] {
  const ids = new Set<string>();
  for (const e of events) {
    for (const key of ["addedSegments", "removedSegments"]) {
      const list = e.after?.[key];
      if (Array.isArray(list)) for (const id of list) ids.add(String(id));
    }
    // Only a flag's events hold rules; a segment's `conditions` have no segment condition.
    if (e.target.kind !== "flag") continue;
    for (const side of [e.before, e.after]) {
      const rules = side?.rules;
      if (Array.isArray(rules)) for (const id of ruleSegmentIds(rules as Rule[])) ids.add(id);
    }
  }
  return [...ids].sort();
}

/**
 * The rules, prerequisites and variants an event of a flag changed, one by one; nothing for an event of
 * anything else, a creation or a deletion, or an event recorded before targeting existed.
 */
export function listChangesOf(e: FlagstaffEvent, segmentName: SegmentNamer): ChangeGroup[] {
  if (e.target.kind !== "flag" || e.before === null || e.after === null) return [];
  return listChanges(e.before as TargetingLists, e.after as TargetingLists, segmentName);
}

const NOUNS: Record<ChangeGroup["what"], string> = {
  Rules: "rule",
  Prerequisites: "prerequisite",
  Variants: "variant",
};

/** An event's change: its lines, then its rules, prerequisites and variants one by one. */
export function ChangeCell(props: {
  event: FlagstaffEvent;
  segmentName: SegmentNamer;
  environmentName: (id: string) => string;
}) {
  const lines = describeChange(props.event, props.segmentName, props.environmentName);
  const groups = listChangesOf(props.event, props.segmentName);
  return (
    <>
      {props.event.comment && (
        <div className="comment" data-testid="event-comment">
          <span className="muted">Comment:</span> <q>{props.event.comment}</q>
        </div>
      )}
      {lines.map((line) => (
        <div key={line}>{line}</div>
      ))}
      {groups.map((g) => {
        const noun = NOUNS[g.what];
        return (
          <div key={g.what} className="change-group">
            <div>
              {g.what}: {howMany(g.before, noun)} → {howMany(g.after, noun)}
            </div>
            <ChangeList changes={g.changes} label={`${g.what} changed`} />
          </div>
        );
      })}
    </>
  );
}

/**
 * Who made a change, as any server wrote it: a person (`type: "user"`, their name and e-mail then), a key,
 * or the service itself. Events recorded before people existed may lack `type`: a `keyId` is a key's.
 */
interface AnyActor {
  type?: string;
  id?: string;
  email?: string;
  name?: string;
  via?: string;
  keyId?: string;
  keyName?: string;
  role?: string;
  system?: string;
}

/** The history of one actor's changes in the project. */
export function actorHistory(project: string, actorId: string): string {
  return `/p/${enc(project)}/history?actor=${enc(actorId)}`;
}

/** The person or key of an event's actor, for the filter's label: "Ada Lovelace", "ci (write)". */
export function actorLabel(actor: unknown): string {
  const a = actor as AnyActor;
  if (a.type === "user") return a.name || a.email || a.id || "someone";
  if (a.type === "key" || a.keyId !== undefined) return `${a.keyName ?? a.keyId} (${a.role ?? "key"})`;
  return a.system ?? "the service";
}

export function ActorCell(props: { actor: unknown }) {
  const { project } = useApp();
  const a = props.actor as AnyActor;
  if (a.type === "user" && a.id) {
    const through = a.via === "key" ? ` with their key ${a.keyName ?? a.keyId ?? ""}` : "";
    return (
      <span title={`${a.email ?? ""}${through}`}>
        <Link to={actorHistory(project, a.id)}>{a.name || a.email || a.id}</Link>
        {a.via === "key" && <span className="muted small"> (key {a.keyName ?? a.keyId})</span>}
      </span>
    );
  }
  return <>{actorLabel(a)}</>;
}

/** Where the changed thing lives in the console, when it has a page this key may open. */
function targetLink(e: FlagstaffEvent, project: string, isAdmin: boolean): string | undefined {
  const p = `/p/${enc(project)}`;
  switch (e.target.kind) {
    case "flag":
      return `${p}/flags/${enc(e.target.name)}`;
    case "segment":
      return `${p}/segments/${enc(e.target.id)}`;
    case "actor":
      return `${p}/actors/${enc(e.target.id)}`;
    case "webhook":
      return isAdmin ? `${p}/webhooks` : undefined;
    case "key":
      return isAdmin ? `${p}/keys` : undefined;
    case "access":
      return isAdmin ? `${p}/access` : undefined;
    case "project":
      return isAdmin ? "/projects" : undefined;
    default:
      return undefined;
  }
}

export function EventList(props: { events: readonly FlagstaffEvent[] }) {
  const { project, isProjectAdmin, environments } = useApp();
  // A configuration's change names its environment; the rest (a flag's creation, a segment…) are project-wide.
  const environmentName = (id: string) => environments.find((e) => e.id === id)?.name ?? id;
  const segmentName = useSegmentNames(segmentIds(props.events));
  return (
    <div className="table-scroll">
      <table aria-label="Events">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Environment</th>
            <th scope="col">Target</th>
            <th scope="col">Who</th>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {props.events.map((e) => {
            const to = targetLink(e, project, isProjectAdmin);
            return (
              <tr key={e.id}>
                <td>{when(e.createdAt)}</td>
                <td>{e.type}</td>
                <td>{e.environment === undefined ? "—" : environmentName(e.environment)}</td>
                <td className="target-cell">{to ? <Link to={to}>{e.target.name}</Link> : e.target.name}</td>
                <td>
                  <ActorCell actor={e.actor} />
                </td>
                <td className="small change-cell">
                  <ChangeCell event={e} segmentName={segmentName} environmentName={environmentName} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
