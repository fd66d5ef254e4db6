// The flag page's one Save. Every form of the page that changes the flag (description, status,
// percentages, variants, targeting) keeps its edits as a pending part instead of saving them itself; the
// bar at the foot of the page counts them, reviews them all in one dialog with a comment for the history,
// and saves them as one PATCH with one If-Match: the version the first edit started from. A flag changed
// elsewhere meanwhile (412) keeps every edit and offers "Save mine" (on the latest version) or "Use theirs".
// Where the environment requires approvals the same edits become a change request instead (docs/
// change-requests.md), and anywhere they can be scheduled for a later time (a change request with a time).
import type { Flag, FlagStatus, UpdateFlagInput } from "@flagstaff/sdk";
import { COMMENT_MAX_LENGTH } from "@flagstaff/sdk";
import { createContext, type ReactNode, useContext, useEffect, useRef, useState } from "react";
import { ChangeList, type ChangeGroup, listChanges, useSegmentNames } from "../targeting-diff.js";
import { type Change, ruleSegmentIds } from "../targeting-text.js";
import { Confirm, ErrorText, guardLeaving, navigate, TextField, useAction, useApp } from "../ui.js";
import { isConflict } from "../format.js";

/** The flag page's tabs, in their order; the URL's `tab` names the one shown. */
export const FLAG_TABS = ["targeting", "variants", "evaluate", "usage", "settings", "history"] as const;
export type FlagTab = (typeof FLAG_TABS)[number];

/** One form's unsaved edits: the fields it would send, and why it cannot be saved yet, if so. */
export interface PendingPart {
  tab: FlagTab;
  /** What the bar calls it: "Status", "Rules and prerequisites"… */
  label: string;
  input: UpdateFlagInput;
  /** A problem the form shows where it is; the Save waits for it. */
  blocked?: string;
}

interface Pending {
  /** A form's part; undefined when it has nothing to save. */
  set: (id: string, part: PendingPart | undefined) => void;
  /** Bumped when everything pending is saved or discarded: each form drops its edits and shows the flag. */
  generation: number;
  /** The server's refusal of the last save (400, 409), for a form that shows each problem where it is. */
  refusal: unknown;
}

const PendingCtx = createContext<Pending | undefined>(undefined);

function usePending(): Pending {
  const value = useContext(PendingCtx);
  if (!value) throw new Error("no flag page");
  return value;
}

/**
 * Registers a form's pending part while it has one (`part` undefined: none), and gives the form the
 * page's generation (to drop its edits when it changes) and the last refusal.
 */
export function usePendingPart(id: string, part: PendingPart | undefined): Pending {
  const pending = usePending();
  const key = part === undefined ? "" : JSON.stringify(part);
  useEffect(() => {
    pending.set(id, part);
  }, [id, key]);
  useEffect(() => () => pending.set(id, undefined), [id]);
  return pending;
}

/**
 * Holds the page's pending parts and renders the forms (`children`), then the bar. `patch` sends one
 * update with If-Match `basis`; `etag` is the version shown.
 */
export function PendingChanges(props: {
  flag: Flag;
  etag: () => string | undefined;
  patch: (input: UpdateFlagInput, basis?: string) => Promise<void>;
  /**
   * Opens a change request with the edits (a flag's PATCH without its comment) made on version `basis`
   * (where the environment requires approvals, or for a change at a later time); answers the console's
   * path of the request, shown once the edits are handed over.
   */
  request: (
    input: UpdateFlagInput,
    options: { title: string; description: string; scheduledAt?: string; basis?: string },
  ) => Promise<string>;
  /**
   * The page's forms, given the tabs with pending edits and `atOnce`, which saves a list's edit (an actor
   * or segment attached) right away: the page's own write does not make its pending edits a conflict.
   */
  children: (tabsWithChanges: ReadonlySet<FlagTab>, atOnce: (input: UpdateFlagInput) => Promise<void>) => ReactNode;
  onShowTab: (tab: FlagTab) => void;
}) {
  const [parts, setParts] = useState<Readonly<Record<string, PendingPart>>>({});
  const [generation, setGeneration] = useState(0);
  const [refusal, setRefusal] = useState<unknown>(undefined);
  const basis = useRef<string | undefined>(undefined);
  const set = (id: string, part: PendingPart | undefined) =>
    setParts((previous) => {
      if (part === undefined && !(id in previous)) return previous;
      const next = { ...previous };
      if (part === undefined) delete next[id];
      else next[id] = part;
      return next;
    });
  const list = Object.values(parts);
  const count = list.length;
  // The version the first of the edits started from; forgotten once nothing is pending.
  if (count > 0 && basis.current === undefined) basis.current = props.etag();
  if (count === 0 && basis.current !== undefined) basis.current = undefined;

  const action = useAction();
  const [reviewing, setReviewing] = useState(false);
  const [comment, setComment] = useState("");
  const { environment } = useApp();
  const approvals = environment?.requiredApprovals ?? 0;
  const [later, setLater] = useState(false);
  const [at, setAt] = useState("");
  const [title, setTitle] = useState("");
  const defaultTitle = `Change ${props.flag.name} in ${environment?.name ?? "this environment"}`;
  // Through a change request: approvals required here, or a change at a time.
  const requesting = approvals > 0 || later;
  const conflict = isConflict(action.error);

  useEffect(() => {
    if (count === 0) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", warn);
    guardLeaving(() =>
      window.confirm(
        `${props.flag.name} has ${count === 1 ? "an unsaved change" : `${count} unsaved changes`}. Leave and discard ${count === 1 ? "it" : "them"}?`,
      ),
    );
    return () => {
      window.removeEventListener("beforeunload", warn);
      guardLeaving(undefined);
    };
  }, [count, props.flag.name]);

  const input: UpdateFlagInput = Object.assign({}, ...list.map((p) => p.input));
  const blocked = list.find((p) => p.blocked !== undefined);
  const done = () => {
    setRefusal(undefined);
    setComment("");
    setGeneration((g) => g + 1);
  };
  const requestIt = async (on: string | undefined) => {
    setReviewing(false);
    setRefusal(undefined);
    let shown: string | undefined;
    const ok = await action.run(async () => {
      shown = await props.request(input, {
        title: title.trim() || defaultTitle,
        description: comment.trim(),
        ...(later && at ? { scheduledAt: new Date(at).toISOString() } : {}),
        basis: on,
      });
    });
    if (ok) {
      setLater(false);
      setAt("");
      setTitle("");
      done();
      // The edits are the request's now: nothing is lost by leaving for it.
      guardLeaving(undefined);
      if (shown !== undefined) navigate(shown);
    }
  };
  const save = async (on: string | undefined) => {
    setReviewing(false);
    setRefusal(undefined);
    let refused: unknown;
    const ok = await action.run(async () => {
      try {
        await props.patch({ ...input, ...(comment.trim() ? { comment: comment.trim() } : {}) }, on);
      } catch (error) {
        refused = error;
        throw error;
      }
    });
    if (ok) done();
    else if (!isConflict(refused)) setRefusal(refused);
  };
  const atOnce = async (change: UpdateFlagInput) => {
    const onShown = basis.current !== undefined && basis.current === props.etag();
    await props.patch(change);
    if (onShown) basis.current = props.etag();
  };
  const tabs = new Set(list.map((p) => p.tab));
  const names = [...new Set(list.map((p) => p.label))];

  return (
    <PendingCtx.Provider value={{ set, generation, refusal }}>
      {props.children(tabs, atOnce)}
      {(count > 0 || action.error !== undefined) && (
        <section className="pending-bar" aria-labelledby="pending-title" data-testid="pending-bar">
          <h2 id="pending-title" className="pending-title">
            {count === 0
              ? "Not saved"
              : `${count === 1 ? "1 unsaved change" : `${count} unsaved changes`}: ${names.join(", ")}`}
          </h2>
          {conflict ? (
            <div className="versions" role="alert">
              <p className="error">
                Not saved: {props.flag.name} was changed elsewhere while you edited it. Your edits are still here: Save
                mine puts them on the latest version (after a review of what they change now), Use theirs drops them and
                shows the saved flag.
              </p>
            </div>
          ) : (
            <ErrorText error={action.error} />
          )}
          {blocked?.blocked && (
            <p id="pending-blocked" className="error" data-testid="save-reason">
              {blocked.label}: {blocked.blocked}{" "}
              <button type="button" className="link" onClick={() => props.onShowTab(blocked.tab)}>
                Show it
              </button>
            </p>
          )}
          <div className="row">
            {conflict ? (
              <>
                <button
                  type="button"
                  className="primary"
                  disabled={action.busy || count === 0 || blocked !== undefined}
                  onClick={() => {
                    basis.current = props.etag();
                    setReviewing(true);
                  }}
                >
                  Save mine
                </button>
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() => {
                    action.clear();
                    done();
                  }}
                >
                  Use theirs
                </button>
              </>
            ) : (
              <>
                <button
                  type="button"
                  className="primary"
                  disabled={action.busy || count === 0 || blocked !== undefined}
                  aria-describedby={blocked ? "pending-blocked" : undefined}
                  onClick={() => setReviewing(true)}
                >
                  {approvals > 0 ? "Request approval…" : "Review and save"}
                </button>
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() => {
                    action.clear();
                    done();
                  }}
                >
                  {count === 0 ? "Dismiss" : "Discard changes"}
                </button>
              </>
            )}
          </div>
        </section>
      )}
      <Confirm
        open={reviewing}
        title={
          approvals > 0
            ? `Request approval for ${count === 1 ? "this change" : `these ${count} changes`} to ${props.flag.name}?`
            : `Save ${count === 1 ? "this change" : `these ${count} changes`} to ${props.flag.name}?`
        }
        confirmLabel={approvals > 0 ? "Request approval" : later ? "Schedule changes" : "Save changes"}
        confirmDisabled={later && at === ""}
        onConfirm={() => void (requesting ? requestIt(basis.current) : save(basis.current))}
        onCancel={() => setReviewing(false)}
      >
        {reviewing && <Review flag={props.flag} input={input} />}
        {approvals > 0 && (
          <>
            <p className="help" data-testid="approval-note">
              {environment?.name} requires {approvals} approval{approvals === 1 ? "" : "s"}: these changes become a
              change request, applied once approved.
            </p>
            <TextField
              id="request-title"
              label="Title"
              field="title"
              maxLength={128}
              value={title}
              onChange={setTitle}
              help={`Default: ${defaultTitle}`}
            />
          </>
        )}
        <TextField
          id="pending-comment"
          label={approvals > 0 ? "Description (optional)" : "Comment (optional)"}
          field="comment"
          multiline
          maxLength={COMMENT_MAX_LENGTH}
          value={comment}
          onChange={setComment}
          help={
            requesting
              ? "Why: shown to the reviewers and with the request in the history."
              : "Why: shown with the change in the history and sent with its webhook."
          }
        />
        <div className="field">
          <label className="check">
            <input type="checkbox" checked={later} onChange={(e) => setLater(e.target.checked)} /> Schedule for a later
            time
          </label>
          {later && (
            <>
              <label htmlFor="schedule-at">Apply at</label>
              <input
                id="schedule-at"
                type="datetime-local"
                value={at}
                required
                onChange={(e) => setAt(e.target.value)}
                aria-describedby="schedule-at-help"
              />
              <span id="schedule-at-help" className="help">
                Your local time. The service applies the changes then{approvals > 0 ? ", once approved" : ""}; they wait
                in Changes until then.
              </span>
            </>
          )}
        </div>
      </Confirm>
    </PendingCtx.Provider>
  );
}

const STATUS_EFFECT: Record<FlagStatus, string> = {
  enabled: "on for every caller there",
  disabled: "off for every caller there",
  conditional: "served by its targeting there",
};

const changed = (subject: string, before: string, after: string): Change => ({
  kind: "changed",
  subject,
  before,
  after,
});

/** Every change a save would make, as the review lists it: the flag's own fields, then the environment's. */
function Review(props: { flag: Flag; input: UpdateFlagInput }) {
  const { environment } = useApp();
  const f = props.flag;
  const i = props.input;
  const where = environment?.name ?? "";
  const segmentName = useSegmentNames(ruleSegmentIds([...(f.rules ?? []), ...(i.rules ?? [])]));
  const everywhere: Change[] = [];
  if (i.description !== undefined && i.description !== f.description) {
    everywhere.push(changed("Description", f.description || "(none)", i.description || "(none)"));
  }
  const here: Change[] = [];
  if (i.status !== undefined && i.status !== f.status) {
    here.push(changed("Status", f.status, `${i.status}: ${STATUS_EFFECT[i.status]}`));
  }
  if (i.percentageActors !== undefined && i.percentageActors !== f.percentageActors) {
    here.push(changed("Percentage of actors", `${f.percentageActors}%`, `${i.percentageActors}%`));
  }
  if (i.percentageCalls !== undefined && i.percentageCalls !== f.percentageCalls) {
    here.push(changed("Percentage of calls", `${f.percentageCalls}%`, `${i.percentageCalls}%`));
  }
  if (i.onVariant !== undefined && i.onVariant !== f.onVariant) {
    here.push(changed("On variant", f.onVariant ?? "on", i.onVariant));
  }
  if (i.offVariant !== undefined && i.offVariant !== f.offVariant) {
    here.push(changed("Off variant", f.offVariant ?? "off", i.offVariant));
  }
  const groups = listChanges(
    { rules: f.rules, prerequisites: f.prerequisites, variants: f.variants },
    {
      rules: i.rules ?? f.rules,
      prerequisites: i.prerequisites ?? f.prerequisites,
      variants: i.variants ?? f.variants,
    },
    segmentName,
  );
  const variants = groups.filter((g) => g.what === "Variants");
  const targeting = groups.filter((g) => g.what !== "Variants");
  return (
    <div className="review" data-testid="pending-review">
      <ReviewPart title="In every environment" fields={everywhere} fieldsLabel="The flag's changes" groups={variants} />
      <ReviewPart title={`In ${where}`} fields={here} fieldsLabel={`Changes in ${where}`} groups={targeting} />
    </div>
  );
}

/** One part of the review (the flag's own, or the environment's): its fields' changes, then its lists'. */
function ReviewPart(props: { title: string; fields: Change[]; fieldsLabel: string; groups: ChangeGroup[] }) {
  if (props.fields.length === 0 && props.groups.length === 0) return null;
  return (
    <section aria-label={props.title}>
      <h3>{props.title}</h3>
      {props.fields.length > 0 && <ChangeList changes={props.fields} label={props.fieldsLabel} />}
      {props.groups.map((g) => (
        <div key={g.what}>
          <h4>
            {g.what} ({g.before} → {g.after})
          </h4>
          <ChangeList changes={g.changes} label={`${g.what} changed`} />
        </div>
      ))}
    </section>
  );
}
