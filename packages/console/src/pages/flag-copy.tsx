// "Copy to…": a flag's configuration in the environment shown, copied to another, after the differences
// are shown. The copy is one write (POST …/flags/{flag}/copy) sent with If-Match of the target's ETag as it
// was read for the comparison, so a change made to the target meanwhile is refused (412), not overwritten.
// It replaces everything a configuration holds (flag.service.ts, copy): the status, both percentages, the
// on and off variants, the rules, the prerequisites and the attached actors and segments; the comparison
// shows each of them, the rules and prerequisites one by one.
import type { Environment, Flag, FlagstaffClient, FlagStatus, FlagType, Percentage } from "@flagstaff/sdk";
import { Fragment, useState } from "react";
import { ChangeList, useSegmentNames } from "../targeting-diff.js";
import {
  type Change,
  howMany,
  type Prerequisite,
  prerequisiteChanges,
  type Rule,
  ruleChanges,
  ruleSegmentIds,
  type SegmentNamer,
} from "../targeting-text.js";
import { Confirm, ErrorText, Loading, useAction, useApp, useData } from "../ui.js";
import { isConflict } from "../format.js";

/** What is attached to a flag in one environment, as far as the console lists it. */
interface Attached {
  /** Actor ids, or undefined when there are more than the console compares one by one. */
  actors: Set<string> | undefined;
  segments: Map<string, string>;
}

/** A configuration to compare: the fields the copy replaces. */
export interface Configuration {
  type: FlagType;
  status: FlagStatus;
  percentageActors: Percentage;
  percentageCalls: Percentage;
  onVariant: string;
  offVariant: string;
  rules: readonly Rule[];
  prerequisites: readonly Prerequisite[];
  actorsCount: number;
  segmentsCount: number;
  attached: Attached;
}

/** Past this many attached actors on either side, the comparison gives the counts only. */
const ACTORS_COMPARED_MAX = 1000;
const PAGE = 100;

async function attached(client: FlagstaffClient, project: string, flag: Flag): Promise<Attached> {
  let actors: Set<string> | undefined;
  if (flag.actorsCount <= ACTORS_COMPARED_MAX) {
    actors = new Set();
    for await (const page of client.flags.actors(project, flag.name, { limit: PAGE }).pages()) {
      for (const a of page.data) actors.add(a.actorId);
    }
  }
  const segments = new Map<string, string>();
  for await (const s of client.segments.listForFlag(project, flag.name, { limit: PAGE })) segments.set(s.id, s.name);
  return { actors, segments };
}

async function configuration(client: FlagstaffClient, project: string, flag: Flag): Promise<Configuration> {
  const { status, percentageActors, percentageCalls, actorsCount, segmentsCount } = flag;
  return {
    type: flag.type ?? "boolean",
    status,
    percentageActors,
    percentageCalls,
    onVariant: flag.onVariant,
    offVariant: flag.offVariant,
    rules: flag.rules ?? [],
    prerequisites: flag.prerequisites ?? [],
    actorsCount,
    segmentsCount,
    attached: await attached(client, project, flag),
  };
}

/**
 * One line of the comparison: what the target has now, and what it will have after the copy; for the
 * rules and the prerequisites, also what changes one by one.
 */
export interface Difference {
  what: string;
  now: string;
  after: string;
  changes?: Change[];
}

const FEW = 10;
/** Ids shown as at most ten, then how many more. */
function few(items: string[]): string {
  const shown = items.slice(0, FEW).join(", ");
  return items.length > FEW ? `${shown} and ${(items.length - FEW).toLocaleString()} more` : shown;
}
const count = (n: number, noun: string) => `${n.toLocaleString()} ${noun}${n === 1 ? "" : "s"}`;

/** Prerequisites in a cell: each in words while they are few, else how many. */
const prerequisitesCell = (list: readonly Prerequisite[]) =>
  list.length === 0
    ? "none"
    : list.length <= 3
      ? list.map((p) => `${p.flag} (${p.variants.join(" or ")})`).join(", ")
      : howMany(list.length, "prerequisite");

/**
 * The differences between the target's configuration (`now`) and the source's, which the copy gives it,
 * in the order the comparison shows them (the order of COMPARED).
 */
export function differences(now: Configuration, source: Configuration, segmentName: SegmentNamer): Difference[] {
  const out: Difference[] = [];
  if (now.status !== source.status) out.push({ what: "Status", now: now.status, after: source.status });
  if (now.percentageActors !== source.percentageActors) {
    out.push({ what: "Percentage of actors", now: `${now.percentageActors}%`, after: `${source.percentageActors}%` });
  }
  if (now.percentageCalls !== source.percentageCalls) {
    out.push({ what: "Percentage of calls", now: `${now.percentageCalls}%`, after: `${source.percentageCalls}%` });
  }
  if (now.onVariant !== source.onVariant) out.push({ what: "On variant", now: now.onVariant, after: source.onVariant });
  if (now.offVariant !== source.offVariant) {
    out.push({ what: "Off variant", now: now.offVariant, after: source.offVariant });
  }
  const rules = ruleChanges(now.rules, source.rules, segmentName);
  if (rules.length > 0) {
    out.push({
      what: "Rules",
      now: howMany(now.rules.length, "rule"),
      after: howMany(source.rules.length, "rule"),
      changes: rules,
    });
  }
  const prerequisites = prerequisiteChanges(now.prerequisites, source.prerequisites);
  if (prerequisites.length > 0) {
    out.push({
      what: "Prerequisites",
      now: prerequisitesCell(now.prerequisites),
      after: prerequisitesCell(source.prerequisites),
      changes: prerequisites,
    });
  }
  const [had, will] = [now.attached.actors, source.attached.actors];
  if (had && will) {
    const added = [...will].filter((id) => !had.has(id)).sort();
    const removed = [...had].filter((id) => !will.has(id)).sort();
    if (added.length > 0 || removed.length > 0) {
      const changes = [
        added.length > 0 ? `adds ${few(added)}` : "",
        removed.length > 0 ? `removes ${few(removed)}` : "",
      ];
      out.push({
        what: "Attached actors",
        now: count(had.size, "actor"),
        after: `${count(will.size, "actor")}: ${changes.filter(Boolean).join("; ")}`,
      });
    }
  } else {
    // Too many to list: the counts, and the copy replaces them all.
    out.push({
      what: "Attached actors",
      now: count(now.actorsCount, "actor"),
      after: `${count(source.actorsCount, "actor")} (too many to compare one by one: all are replaced)`,
    });
  }
  const [segmentsNow, segmentsAfter] = [now.attached.segments, source.attached.segments];
  const addedSegments = [...segmentsAfter].filter(([id]) => !segmentsNow.has(id)).map(([, name]) => name);
  const removedSegments = [...segmentsNow].filter(([id]) => !segmentsAfter.has(id)).map(([, name]) => name);
  if (addedSegments.length > 0 || removedSegments.length > 0) {
    const names = (m: Map<string, string>) => (m.size === 0 ? "none" : few([...m.values()].sort()));
    out.push({ what: "Attached segments", now: names(segmentsNow), after: names(segmentsAfter) });
  }
  return out;
}

/**
 * Everything the copy replaces, as the comparison names it. A boolean flag's on and off variants are
 * always `on` and `off`, so they are not named for it.
 */
export function compared(type: FlagType): string[] {
  return [
    "Status",
    "Percentage of actors",
    "Percentage of calls",
    ...(type === "boolean" ? [] : ["On variant", "Off variant"]),
    "Rules",
    "Prerequisites",
    "Attached actors",
    "Attached segments",
  ];
}

/** What the comparison found the same, in lower case: "percentage of calls, attached segments". */
function unchanged(type: FlagType, found: Difference[]): string[] {
  return compared(type)
    .filter((what) => !found.some((d) => d.what === what))
    .map((what) => what.toLowerCase());
}

/** Why "Copy to…" cannot be used, or undefined when it can. */
function copyBlocked(
  readOnly: string | undefined,
  bound: boolean,
  targets: number,
  writable: number,
): string | undefined {
  if (readOnly !== undefined) return readOnly;
  if (bound) return "This key is bound to one environment: it cannot copy to another.";
  if (targets === 0) return "The project has one environment: there is nowhere to copy to.";
  if (writable === 0) return "The other environments are protected: only admins of this project copy into them.";
  return undefined;
}

export function CopyTo(props: { flag: Flag; changed: () => void }) {
  const { conn, project, environment, environments, session, readOnlyReason, isProjectAdmin } = useApp();
  const source = environment as Environment;
  const others = environments.filter((e) => e.id !== source.id);
  // A protected environment's configurations are its project admins' to change: a copy into one is theirs too.
  const targets = isProjectAdmin ? others : others.filter((e) => !e.protected);
  const left = others.filter((e) => !targets.includes(e));
  const blocked = copyBlocked(readOnlyReason, Boolean(session.environment), others.length, targets.length);
  const [open, setOpen] = useState(false);
  // The target chosen, kept while the dialog is open even if it leaves the project's list meanwhile (the
  // copy then says why it failed): never swapped for another under the person's eyes.
  const [chosen, setChosen] = useState<Environment | undefined>(undefined);
  const target = chosen?.id ?? "";
  const targetName = chosen?.name ?? "";
  const options = chosen && !targets.some((e) => e.id === chosen.id) ? [...targets, chosen] : targets;
  const [copied, setCopied] = useState<string | undefined>(undefined);
  const action = useAction();
  // Both configurations, read afresh each time the dialog opens or the target changes (and after a 412).
  const [reads, setReads] = useState(0);
  const comparison = useData(
    async () => {
      if (!open || !target) return undefined;
      // The source is read afresh too: the copy copies what the server holds, not what the page last polled.
      const [here, there] = await Promise.all([
        conn.client.flags.get(project, props.flag.name),
        conn.clientIn(target).flags.getWithETag(project, props.flag.name),
      ]);
      const [mine, theirs] = await Promise.all([
        configuration(conn.client, project, here),
        configuration(conn.clientIn(target), project, there.value),
      ]);
      return { etag: there.etag, mine, theirs };
    },
    [open, target, reads, props.flag.name],
    0,
  );
  const { mine, theirs } = comparison.data ?? {};
  // Rules name segments by id: the comparison names them.
  const segmentName = useSegmentNames([...ruleSegmentIds(mine?.rules ?? []), ...ruleSegmentIds(theirs?.rules ?? [])]);
  const found = mine && theirs ? differences(theirs, mine, segmentName) : undefined;
  const type = props.flag.type ?? "boolean";
  return (
    <div className="copy-to">
      <button
        type="button"
        disabled={blocked !== undefined}
        aria-describedby={blocked ? "copy-blocked" : undefined}
        onClick={() => {
          action.clear();
          setCopied(undefined);
          if (!chosen || !targets.some((e) => e.id === chosen.id)) setChosen(targets[0]);
          setOpen(true);
        }}
      >
        Copy to…
      </button>
      {blocked && (
        <span id="copy-blocked" className="help">
          {blocked}
        </span>
      )}
      {copied && (
        <span className="help" role="status">
          {copied}
        </span>
      )}
      <Confirm
        open={open}
        title={`Copy ${props.flag.name} from ${source.name}`}
        confirmLabel={`Copy to ${targetName}`}
        confirmDisabled={found === undefined || found.length === 0 || action.busy}
        onCancel={() => setOpen(false)}
        onConfirm={async () => {
          const ok = await action.run(async () => {
            const input = { from: source.id, to: target };
            await conn.client.flags.copy(project, props.flag.name, input, { ifMatch: comparison.data?.etag });
          });
          if (ok) {
            setOpen(false);
            setCopied(`Copied ${source.name}'s configuration to ${targetName}.`);
            props.changed();
          } else {
            // Refused: show the target as it is now, so the next attempt is made on what is on screen.
            setReads((n) => n + 1);
          }
        }}
      >
        <div className="field">
          <label htmlFor="copy-target">Copy to</label>
          <select
            id="copy-target"
            value={target}
            aria-describedby="copy-target-help"
            onChange={(e) => setChosen(options.find((o) => o.id === e.target.value))}
          >
            {options.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name}
              </option>
            ))}
          </select>
          <span id="copy-target-help" className="help">
            The copy replaces {targetName}'s status, percentages,{type === "boolean" ? "" : " on and off variants,"}{" "}
            rules, prerequisites, attached actors and attached segments with {source.name}'s. The description and the
            variants are shared by every environment.
            {left.length > 0 &&
              ` Protected environments (${left.map((e) => e.name).join(", ")}) are not offered: only admins of this project change them.`}
          </span>
        </div>
        <ErrorText error={action.error} />
        {isConflict(action.error) && (
          <p className="help">The comparison below is {targetName}'s configuration as it is now.</p>
        )}
        <ErrorText error={comparison.error} />
        {comparison.data === undefined && comparison.loading && <Loading what="both configurations" />}
        {found && found.length === 0 && (
          <p data-testid="copy-same">
            {targetName} already has the same configuration as {source.name}: there is nothing to copy.
          </p>
        )}
        {found && found.length > 0 && found.length < compared(type).length && (
          <p className="help" data-testid="copy-unchanged">
            Already the same: {unchanged(type, found).join(", ")}.
          </p>
        )}
        {found && found.length > 0 && (
          <table className="differences" aria-label={`Differences between ${targetName} and ${source.name}`}>
            <thead>
              <tr>
                <th scope="col">What</th>
                <th scope="col">In {targetName} now</th>
                <th scope="col">After the copy</th>
              </tr>
            </thead>
            <tbody>
              {found.map((d) => (
                <Fragment key={d.what}>
                  <tr>
                    <th scope="row">{d.what}</th>
                    <td>{d.now}</td>
                    <td>{d.after}</td>
                  </tr>
                  {d.changes && (
                    // The rules and prerequisites one by one, under their row, across the table.
                    <tr className="difference-details">
                      <td colSpan={3}>
                        <ChangeList changes={d.changes} label={`${d.what}: what the copy changes in ${targetName}`} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        )}
      </Confirm>
    </div>
  );
}
