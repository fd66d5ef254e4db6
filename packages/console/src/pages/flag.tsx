import type { Flag, FlagExplanation, FlagStatus, FlagType, Percentage, Segment, UpdateFlagInput } from "@flagstaff/sdk";
import { useEffect, useRef, useState } from "react";
import { baseUrl } from "../api/session.js";
import { targetingSummary } from "../targeting-text.js";
import {
  type Cursor,
  ConfigurationRights,
  Confirm,
  CopyButton,
  DeleteZone,
  ErrorText,
  enc,
  isConflict,
  Loading,
  navigate,
  PERCENTAGES,
  Pager,
  parseIds,
  StatusBadge,
  TextField,
  useAction,
  useApp,
  useData,
  useTagged,
  when,
} from "../ui.js";
import { EventList } from "./events.js";
import { CopyTo } from "./flag-copy.js";
import { attachedSummary, staleReason } from "./flags.js";
import { MembersPanel } from "./members.js";
import {
  type AttributeRow,
  AttributesEditor,
  AttributeSuggestions,
  newAttributeRow,
  parseAttributes,
  TargetingPanel,
  VariantsPanel,
} from "./targeting.js";

const STATUS_LABELS: [FlagStatus, string, string][] = [
  ["enabled", "Enabled", "on for every caller"],
  ["disabled", "Disabled", "off for every caller"],
  ["conditional", "Conditional", "on by the targeting below"],
];

export function FlagPage(props: { name: string }) {
  const { conn, project, canWrite, environment, environments, protectedReason } = useApp();
  const {
    data: flag,
    etag,
    patch,
  } = useTagged(
    () => conn.client.flags.getWithETag(project, props.name),
    (input: UpdateFlagInput, ifMatch) => conn.client.flags.updateWithETag(project, props.name, input, { ifMatch }),
    [project, props.name],
  );

  if (flag.data === undefined) {
    return flag.error ? (
      <section>
        <h1>Flag {props.name}</h1>
        <ErrorText error={flag.error} />
      </section>
    ) : (
      <Loading what="the flag" />
    );
  }
  const f = flag.data;
  const stale = staleReason(f);
  return (
    <article aria-labelledby="flag-title">
      <p className="crumbs">
        <a
          href={`/console/p/${enc(project)}/flags`}
          onClick={(e) => {
            e.preventDefault();
            navigate(`/p/${enc(project)}/flags`);
          }}
        >
          Flags
        </a>{" "}
        /
      </p>
      <div className="title-row">
        <h1 id="flag-title">{f.name}</h1>
        <StatusBadge status={f.status} />
        {stale && <span className="badge stale">stale: {stale}</span>}
      </div>
      <div className="environment-row">
        <p data-testid="flag-environment">
          Editing <strong>{environment?.name}</strong>: the status, percentages, targeting and attached actors and
          segments below are {environment?.name}'s only. The description and the variants are shared by every
          environment.
          {canWrite && protectedReason && (
            <>
              {" "}
              <strong data-testid="protected-note">{environment?.name} is protected</strong>: only admins of this
              project change its configurations.
            </>
          )}
        </p>
        <CopyTo flag={f} changed={() => void flag.reload()} />
      </div>
      {environments.length > 1 && (
        <ul className="plain environment-statuses" aria-label="Status in each environment">
          {environments.map((e) => (
            <li key={e.id}>
              {e.name}: <StatusBadge status={f.environments[e.id]?.status ?? "unknown"} />
            </li>
          ))}
        </ul>
      )}
      <ErrorText error={flag.error} />
      <p className="muted">
        <span data-testid="targeting-summary">{targetingSummary(f)}</span> ·{" "}
        <span data-testid="attached-counts">{attachedSummary(f)}</span> · updated {when(f.updatedAt)} · last checked{" "}
        {when(f.latestCheckedAt)}
      </p>
      <Description flag={f} patch={patch} etag={etag} />
      <ConfigurationRights>
        <StatusControl flag={f} patch={patch} etag={etag} />
        <Percentages flag={f} patch={patch} etag={etag} />
      </ConfigurationRights>
      {/* The attribute names offered by the rules' and the Evaluate panel's attribute boxes. */}
      <AttributeSuggestions />
      <VariantsPanel flag={f} patch={patch} etag={etag} />
      <ConfigurationRights>
        <TargetingPanel flag={f} patch={patch} etag={etag} />
        <MembersPanel
          id="flag-actors"
          title="Attached actors"
          noun="actor"
          count={f.actorsCount}
          load={(q, page) => conn.client.flags.actors(project, f.name, { q }).page(page)}
          add={(ids) => patch({ addActors: ids })}
          remove={(id) => patch({ removeActors: [id] })}
          changed={() => void flag.reload()}
        />
        <SegmentsPanel flag={f} patch={patch} />
      </ConfigurationRights>
      <EvaluatePanel flag={f} />
      <Snippets flag={f} />
      <FlagHistory flag={f} />
      {canWrite && <DeleteFlag flag={f} etag={etag} />}
    </article>
  );
}

/** An edit of the flag, sent with If-Match: `basis` when given (the version a form started from), else the shown one. */
type Patch = (input: UpdateFlagInput, basis?: string) => Promise<void>;

/**
 * A form's unsaved edits: the ETag of the version they started from, kept until saved or discarded. A
 * save refused because the flag changed meanwhile (412) keeps them: the form shows both versions, and
 * "Save mine" sends them again on the latest version (`rebase`), "Use theirs" drops them.
 */
function useEditing(etag: () => string | undefined) {
  const [editing, setEditingState] = useState(false);
  const basis = useRef<string | undefined>(undefined);
  const setEditing = (on: boolean) => {
    if (on && !editing) basis.current = etag();
    setEditingState(on);
  };
  return {
    editing,
    setEditing,
    basis: () => basis.current,
    rebase: () => {
      basis.current = etag();
    },
  };
}

/** The two versions after a refused save: what was typed and what is saved now, with the way out of each. */
function TwoVersions(props: {
  what: string;
  mine: string;
  theirs: string;
  busy: boolean;
  onSaveMine: () => void;
  onUseTheirs: () => void;
}) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of two read-outs and their two buttons, not form fields
    <div className="versions" role="group" aria-label={`${props.what}: two versions`}>
      <p className="error" role="alert">
        Not saved: the {props.what.toLowerCase()} was changed elsewhere while you edited it. Nothing you typed is lost;
        choose which version to keep.
      </p>
      <dl className="versions-list">
        <dt>Yours</dt>
        <dd>{props.mine || "(empty)"}</dd>
        <dt>Saved meanwhile</dt>
        <dd>{props.theirs || "(empty)"}</dd>
      </dl>
      <div className="row">
        <button type="button" className="primary" disabled={props.busy} onClick={props.onSaveMine}>
          Save mine
        </button>
        <button type="button" disabled={props.busy} onClick={props.onUseTheirs}>
          Use theirs
        </button>
      </div>
    </div>
  );
}

/** The server's limit on a flag's description (schemas.ts: Limits.description). */
const DESCRIPTION_MAX = 1024;

function Description(props: { flag: Flag; patch: Patch; etag: () => string | undefined }) {
  const { canWrite } = useApp();
  const [text, setText] = useState(props.flag.description);
  const { editing, setEditing, basis, rebase } = useEditing(props.etag);
  const action = useAction();
  const conflict = isConflict(action.error);
  useEffect(() => {
    if (!editing) setText(props.flag.description);
  }, [props.flag.description, editing]);
  const save = async () => {
    if (await action.run(() => props.patch({ description: text }, basis()))) setEditing(false);
  };
  return (
    <form
      className="inline"
      onSubmit={async (e) => {
        e.preventDefault();
        await save();
      }}
    >
      <TextField
        id="flag-description"
        label="Description"
        field="description"
        multiline
        maxLength={DESCRIPTION_MAX}
        value={text}
        disabled={!canWrite}
        error={action.error}
        onChange={(value) => {
          setEditing(true);
          setText(value);
        }}
      />
      <button type="submit" disabled={!canWrite || !editing || action.busy}>
        Save description
      </button>
      {conflict ? (
        <TwoVersions
          what="Description"
          mine={text}
          theirs={props.flag.description}
          busy={action.busy}
          onSaveMine={() => {
            rebase();
            void save();
          }}
          onUseTheirs={() => {
            action.clear();
            setEditing(false);
          }}
        />
      ) : (
        <ErrorText error={action.error} shownFields={["description"]} />
      )}
    </form>
  );
}

function StatusControl(props: { flag: Flag; patch: Patch; etag: () => string | undefined }) {
  const { canWrite, environment, readOnlyReason } = useApp();
  const where = environment?.name ?? "";
  const [pending, setPending] = useState<FlagStatus | undefined>(undefined);
  // The version the person saw when choosing: a change made elsewhere while the dialog is open is a 412.
  const basis = useRef<string | undefined>(undefined);
  const action = useAction();
  const current = props.flag.status;
  const apply = async (status: FlagStatus) => {
    setPending(undefined);
    await action.run(() => props.patch({ status }, basis.current));
  };
  return (
    <section className="card" aria-labelledby="status-legend">
      {/* Not disabled while a change is sent: the radio that opened the dialog has focus again by then, and
          disabling it would drop focus to <body>. A second choice waits for the first (aria-busy). */}
      <fieldset
        disabled={!canWrite}
        aria-busy={action.busy || undefined}
        aria-describedby={canWrite ? undefined : "status-ro"}
      >
        <legend id="status-legend">Status in {where}</legend>
        <div role="radiogroup" aria-labelledby="status-legend" className="radios">
          {STATUS_LABELS.map(([value, label, hint]) => (
            <label key={value} className="radio">
              <input
                type="radio"
                name="flag-status"
                value={value}
                checked={current === value}
                onChange={() => {
                  // Every change of status changes the answer for every caller that is not targeted.
                  if (value !== current && !action.busy) {
                    basis.current = props.etag();
                    setPending(value);
                  }
                }}
              />
              {label} <span className="muted small">({hint})</span>
            </label>
          ))}
        </div>
      </fieldset>
      {!canWrite && (
        <p id="status-ro" className="help">
          {readOnlyReason}
        </p>
      )}
      <ErrorText error={action.error} />
      <Confirm
        open={pending !== undefined}
        title={`Change the status in ${where} for every caller?`}
        confirmLabel={`Make it ${pending ?? ""}`}
        onConfirm={() => pending && void apply(pending)}
        onCancel={() => setPending(undefined)}
      >
        <p>
          Changing <strong>{props.flag.name}</strong> from <strong>{current}</strong> to <strong>{pending}</strong> in{" "}
          <strong>{where}</strong> affects every caller of this flag there
          {pending === "enabled"
            ? ": it will be on for everyone."
            : pending === "disabled"
              ? ": it will be off for everyone."
              : ", by its targeting rules."}
        </p>
      </Confirm>
    </section>
  );
}

function Percentages(props: { flag: Flag; patch: Patch; etag: () => string | undefined }) {
  const { canWrite, readOnlyReason } = useApp();
  const [actors, setActors] = useState<Percentage>(props.flag.percentageActors);
  const [calls, setCalls] = useState<Percentage>(props.flag.percentageCalls);
  const { editing: dirty, setEditing: setDirty, basis, rebase } = useEditing(props.etag);
  const action = useAction();
  const save = async () => {
    const input = { percentageActors: actors, percentageCalls: calls };
    if (await action.run(() => props.patch(input, basis()))) setDirty(false);
  };
  const both = (a: number, c: number) => `${a}% of actors, ${c}% of calls`;
  useEffect(() => {
    if (!dirty) {
      setActors(props.flag.percentageActors);
      setCalls(props.flag.percentageCalls);
    }
  }, [props.flag.percentageActors, props.flag.percentageCalls, dirty]);
  const select = (id: string, label: string, value: Percentage, set: (p: Percentage) => void, help: string) => (
    <p>
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value}
        disabled={!canWrite}
        aria-describedby={`${id}-help`}
        onChange={(e) => {
          setDirty(true);
          set(Number(e.target.value) as Percentage);
        }}
      >
        {PERCENTAGES.map((p) => (
          <option key={p} value={p}>
            {p}%
          </option>
        ))}
      </select>
      <span id={`${id}-help`} className="help">
        {help}
      </span>
    </p>
  );
  return (
    <form
      className="card"
      aria-labelledby="pct-title"
      onSubmit={async (e) => {
        e.preventDefault();
        await save();
      }}
    >
      <h2 id="pct-title">Percentages</h2>
      <div className="grid2">
        {select(
          "pct-actors",
          "Percentage of actors",
          actors,
          setActors,
          "Sticky: the same actors stay in. Used while conditional.",
        )}
        {select("pct-calls", "Percentage of calls", calls, setCalls, "Random on each check. Used while conditional.")}
      </div>
      {isConflict(action.error) ? (
        <TwoVersions
          what="Percentages"
          mine={both(actors, calls)}
          theirs={both(props.flag.percentageActors, props.flag.percentageCalls)}
          busy={action.busy}
          onSaveMine={() => {
            rebase();
            void save();
          }}
          onUseTheirs={() => {
            action.clear();
            setDirty(false);
          }}
        />
      ) : (
        <ErrorText error={action.error} />
      )}
      <div className="row">
        <button type="submit" disabled={!canWrite || !dirty || action.busy}>
          Save percentages
        </button>
        {dirty && (
          <button
            type="button"
            onClick={() => {
              action.clear();
              setDirty(false);
            }}
          >
            Discard
          </button>
        )}
      </div>
      {!canWrite && <p className="help">{readOnlyReason}</p>}
    </form>
  );
}

/** Every segment of the project, for adding by name (at most 100 pages of 100). */
async function allSegments(
  list: (after?: string) => Promise<{ data: Segment[]; pagination: { after: string | null } }>,
): Promise<Segment[]> {
  const out: Segment[] = [];
  let after: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await list(after);
    out.push(...page.data);
    if (!page.pagination.after) break;
    after = page.pagination.after;
  }
  return out;
}

function SegmentsPanel(props: { flag: Flag; patch: Patch }) {
  const { conn, project, canWrite, readOnlyReason } = useApp();
  const [cursor, setCursor] = useState<Cursor>({});
  const attached = useData(
    () => conn.client.segments.listForFlag(project, props.flag.name).page({ limit: 20, ...cursor }),
    [project, props.flag.name, props.flag.updatedAt, cursor.before, cursor.after],
  );
  const [name, setName] = useState("");
  const [choices, setChoices] = useState<Segment[] | undefined>(undefined);
  const action = useAction();
  const loadChoices = async () => {
    if (choices === undefined) {
      setChoices(await allSegments((after) => conn.client.segments.list(project).page({ limit: 100, after })));
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
              choices ?? (await allSegments((after) => conn.client.segments.list(project).page({ limit: 100, after })));
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
      {attached.data && attached.data.data.length === 0 && <p>No segments attached.</p>}
      {attached.data && attached.data.data.length > 0 && (
        <ul className="plain">
          {attached.data.data.map((s) => (
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
      <Pager
        page={attached.data}
        label="Attached segments"
        onPrevious={(before) => setCursor({ before })}
        onNext={(after) => setCursor({ after })}
      />
    </section>
  );
}

const pct = (threshold: number) => `${threshold / 1000}% of actors`;

/** The rule that decided, in words: which rule, for which actor, through which segment, bucket vs threshold. */
export function why(e: FlagExplanation): string {
  const who = e.actors.find((a) => a.actorId === e.actorId);
  switch (e.rule) {
    case "status":
      return e.enabled
        ? "Rule: status. The flag is enabled, so it is on for every caller."
        : "Rule: status. The flag is disabled, so it is off for every caller.";
    case "actor":
      return `Rule: attached actor. ${e.actorId} is attached to the flag directly.`;
    case "segment":
      return `Rule: segment. ${e.actorId} is a member of the attached segment ${e.segment?.name ?? e.segmentId}.`;
    case "rule": {
      const m = e.matchedRule;
      if (!m) return "Rule: a targeting rule.";
      const held =
        m.conditions.length === 0
          ? "it has no conditions, so it holds for everyone"
          : m.conditions.length === 1
            ? "its one condition held"
            : `all of its ${m.conditions.length} conditions held`;
      return `Rule: targeting rule ${m.index + 1} “${m.id}”${m.description ? ` (${m.description})` : ""}: ${held}.`;
    }
    case "prerequisite":
      return `Rule: prerequisite. The prerequisite flag ${e.prerequisite ?? "?"} did not serve one of its required variants, so the off variant is served.`;
    case "actor_rollout":
      return `Rule: actor rollout. ${e.actorId}'s bucket ${who?.bucket.toLocaleString() ?? "?"} is below the threshold ${e.threshold.toLocaleString()} (${pct(e.threshold)}).`;
    default: {
      const calls =
        e.callRolloutPercentage > 0
          ? ` The call rollout still turns ${e.callRolloutPercentage}% of checks on at random.`
          : "";
      const rollout =
        e.actors.length === 0
          ? "no actor was given"
          : `no actor is attached or in an attached segment, and no bucket is below the threshold ${e.threshold.toLocaleString()} (${pct(e.threshold)})`;
      return `No rule matched: ${rollout}.${calls}`;
    }
  }
}

function EvaluatePanel(props: { flag: Flag }) {
  const { conn, project } = useApp();
  const [text, setText] = useState("");
  const [attributes, setAttributes] = useState<AttributeRow[]>(() => [newAttributeRow()]);
  const [result, setResult] = useState<FlagExplanation | undefined>();
  const action = useAction();
  const typed = props.flag.type !== undefined && props.flag.type !== "boolean";
  return (
    <section className="card" aria-labelledby="evaluate-title">
      <h2 id="evaluate-title">Evaluate</h2>
      <form
        className="evaluate"
        onSubmit={async (e) => {
          e.preventDefault();
          const ids = parseIds(text).slice(0, 100);
          await action.run(async () => {
            setResult(
              await conn.client.flags.explain(project, props.flag.name, {
                actorIds: ids,
                attributes: parseAttributes(attributes),
              }),
            );
          });
        }}
      >
        <div className="field">
          <label htmlFor="evaluate-actors">Actor ids</label>
          <input
            id="evaluate-actors"
            value={text}
            onChange={(e) => setText(e.target.value)}
            aria-describedby="evaluate-help"
          />
          <span id="evaluate-help" className="help">
            Separate several with commas or spaces; the flag is on if it is on for any of them. Nothing is recorded.
          </span>
        </div>
        <AttributesEditor rows={attributes} onChange={setAttributes} />
        <button type="submit" className="primary" disabled={action.busy}>
          Evaluate
        </button>
      </form>
      <ErrorText error={action.error} />
      <div aria-live="polite">
        {result && (
          <div className="result" data-testid="evaluation">
            {typed ? (
              // A typed flag serves a variant; "enabled" only means it is not the off variant.
              <p>
                <strong>Serves {result.variant ?? "nothing"}</strong>{" "}
                <span className="muted small">
                  ({result.variant === props.flag.offVariant ? "the off variant" : "not the off variant"}: enabled is{" "}
                  {String(result.enabled)})
                </span>
              </p>
            ) : (
              <p>
                <strong className={result.enabled ? "on" : "off"}>{result.enabled ? "Enabled" : "Not enabled"}</strong>{" "}
                <span className="muted small">({result.reason})</span>
              </p>
            )}
            <dl className="pairs" data-testid="evaluation-served">
              <dt>Variant</dt>
              <dd data-testid="evaluation-variant">{result.variant ?? "—"}</dd>
              <dt>Value</dt>
              <dd>
                <code data-testid="evaluation-value">{JSON.stringify(result.value ?? null)}</code>
              </dd>
              <dt>Reason</dt>
              <dd data-testid="evaluation-reason">{result.reason}</dd>
              <dt>Matched rule</dt>
              <dd data-testid="evaluation-rule">
                {result.matchedRule
                  ? `${result.matchedRule.index + 1}. ${result.matchedRule.id}${result.matchedRule.description ? ` (${result.matchedRule.description})` : ""}`
                  : "none"}
              </dd>
              {result.prerequisite && (
                <>
                  <dt>Failed prerequisite</dt>
                  <dd data-testid="evaluation-prerequisite">{result.prerequisite}</dd>
                </>
              )}
            </dl>
            <p data-testid="why">{why(result)}</p>
            {result.actors.length > 0 && (
              <table aria-label="Per actor">
                <thead>
                  <tr>
                    <th scope="col">Actor</th>
                    <th scope="col">Attached</th>
                    <th scope="col">Attached segments it is in</th>
                    <th scope="col">Bucket / threshold</th>
                    <th scope="col">In rollout</th>
                  </tr>
                </thead>
                <tbody>
                  {result.actors.map((a) => (
                    <tr key={a.actorId}>
                      <td>{a.actorId}</td>
                      <td>{a.attached ? "yes" : "no"}</td>
                      <td>{a.segments.map((s) => s.name).join(", ") || "—"}</td>
                      <td>
                        {a.bucket.toLocaleString()} / {result.threshold.toLocaleString()}
                      </td>
                      <td>{a.inRollout ? "yes" : "no"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
        )}
      </div>
    </section>
  );
}

/** The OpenFeature client's evaluation method for each type of flag (server and web SDKs alike). */
export const OPENFEATURE_METHODS: Record<FlagType, string> = {
  boolean: "getBooleanValue",
  string: "getStringValue",
  number: "getNumberValue",
  object: "getObjectValue",
};

/**
 * The snippets that check a flag, each with the call that fits its type: the check answers a typed flag's
 * variant and value beside `enabled`, the SDK's `flags.evaluate` reads them (`flags.check` answers only
 * whether it is on), and OpenFeature asks for the value in the flag's type (any other answers
 * TYPE_MISMATCH and the default). The default shown is the off variant's value.
 */
export function snippets(flag: Flag, project: string, url: string): [label: string, code: string][] {
  const type = flag.type ?? "boolean";
  const name = JSON.stringify(flag.name);
  const path = `/projects/${enc(project)}/flags/${enc(flag.name)}/check`;
  const variantValue = (key: string) => flag.variants?.find((v) => v.key === key)?.value;
  const fallback = type === "boolean" ? "false" : JSON.stringify(variantValue(flag.offVariant) ?? null);
  const example =
    type === "boolean"
      ? `{"enabled":true}`
      : JSON.stringify({ enabled: true, variant: flag.onVariant, value: variantValue(flag.onVariant) ?? null });
  const method = OPENFEATURE_METHODS[type];
  const sdkCall =
    type === "boolean"
      ? `const on = await flagstaff.flags.check(${JSON.stringify(project)}, ${name}, { actorIds: ["alice"] });`
      : `const { variant, value } = await flagstaff.flags.evaluate(${JSON.stringify(project)}, ${name}, { actorIds: ["alice"] });`;
  return [
    [
      "curl",
      `curl -s -H "Authorization: Bearer $FLAGSTAFF_KEY" \\\n  "${url}${path}?actorIds=alice"\n# answers, for instance, ${example}`,
    ],
    [
      "SDK (TypeScript)",
      `import { FlagstaffClient } from "@flagstaff/sdk";\n\nconst flagstaff = new FlagstaffClient({ baseUrl: "${url}", apiKey: process.env.FLAGSTAFF_KEY });\n${sdkCall}`,
    ],
    [
      "OpenFeature (Node.js)",
      `import { OpenFeature } from "@openfeature/server-sdk";\nimport { FlagstaffProvider } from "@flagstaff/openfeature";\n\nawait OpenFeature.setProviderAndWait(new FlagstaffProvider({ baseUrl: "${url}", apiKey: process.env.FLAGSTAFF_KEY, projectId: ${JSON.stringify(project)} }));\nconst value = await OpenFeature.getClient().${method}(${name}, ${fallback}, { targetingKey: "alice" });`,
    ],
    [
      "OpenFeature (web)",
      `import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";\nimport { OpenFeature } from "@openfeature/web-sdk";\n\nawait OpenFeature.setContext({ targetingKey: "alice" });\nawait OpenFeature.setProviderAndWait(new OFREPWebProvider({ baseUrl: "${url}", headers: [["Authorization", \`Bearer \${FLAGSTAFF_BROWSER_KEY}\`]] }));\nconst value = OpenFeature.getClient().${method}(${name}, ${fallback});`,
    ],
  ];
}

function Snippets(props: { flag: Flag }) {
  const { project, environment } = useApp();
  const type = props.flag.type ?? "boolean";
  return (
    <section className="card" aria-labelledby="snippets-title">
      <h2 id="snippets-title">Check this flag</h2>
      <p className="help">
        A check answers for the environment of the key it is made with: use a check key of {environment?.name}.{" "}
        {type === "boolean"
          ? "A boolean flag answers whether it is on."
          : `A ${type} flag answers the variant it serves and its value; OpenFeature asks for a ${type}.`}{" "}
        A web page needs a check key of its own (anyone who opens the page can read it) and its origin in the server's{" "}
        <code>CORS_ALLOWED_ORIGINS</code>.
      </p>
      {snippets(props.flag, project, baseUrl()).map(([label, code]) => (
        <div key={label} className="snippet" data-testid="snippet">
          <div className="row">
            <h3>{label}</h3>
            <CopyButton text={code} label={`Copy ${label} snippet`} />
          </div>
          <pre>
            <code>{code}</code>
          </pre>
        </div>
      ))}
    </section>
  );
}

function FlagHistory(props: { flag: Flag }) {
  const { conn, project } = useApp();
  const [cursor, setCursor] = useState<Cursor>({});
  const events = useData(
    () => conn.client.events.listForFlag(project, props.flag.name).page({ limit: 10, ...cursor }),
    [project, props.flag.name, cursor.before, cursor.after],
  );
  return (
    <section className="card" aria-labelledby="flag-history-title">
      <h2 id="flag-history-title">History</h2>
      <ErrorText error={events.error} />
      {events.data && events.data.data.length === 0 && <p>No events.</p>}
      {events.data && events.data.data.length > 0 && <EventList events={events.data.data} />}
      <Pager
        page={events.data}
        label="History"
        onPrevious={(before) => setCursor({ before })}
        onNext={(after) => setCursor({ after })}
      />
    </section>
  );
}

function DeleteFlag(props: { flag: Flag; etag: () => string | undefined }) {
  const { conn, project } = useApp();
  return (
    <DeleteZone
      noun="flag"
      name={props.flag.name}
      etag={props.etag}
      remove={(ifMatch) => conn.client.flags.delete(project, props.flag.name, { ifMatch })}
      after={`/p/${enc(project)}/flags`}
    >
      <p>
        It is deleted in every environment, not only in this one: every check of it will answer 404 from now on. Its
        history stays.
      </p>
    </DeleteZone>
  );
}
