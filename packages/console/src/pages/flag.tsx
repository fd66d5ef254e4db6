import {
  type Flag,
  type FlagStatus,
  type FlagstaffEvent,
  isFlagstaffError,
  type Percentage,
  type Segment,
} from "@flagstaff/sdk";
import { useEffect, useRef, useState } from "react";
import { type Explanation, isNotAvailable } from "../api/extensions.js";
import { baseUrl } from "../api/session.js";
import {
  type Cursor,
  Confirm,
  CopyButton,
  ErrorText,
  enc,
  Loading,
  navigate,
  PERCENTAGES,
  Pager,
  parseIds,
  READ_ONLY_REASON,
  StatusBadge,
  useAction,
  useApp,
  useData,
  when,
} from "../ui.js";
import { MembersPanel } from "./members.js";
import { rolloutSummary, staleReason } from "./flags.js";

type CountedFlag = Flag & { actorsCount?: number; segmentsCount?: number };

const STATUS_LABELS: [FlagStatus, string, string][] = [
  ["enabled", "Enabled", "on for every caller"],
  ["disabled", "Disabled", "off for every caller"],
  ["conditional", "Conditional", "on by the targeting below"],
];

/** Says so and reloads when a write lost a race (412): the edit was not applied. */
export function conflictText(error: unknown, what: string): string | undefined {
  return isFlagstaffError(error) && error.status === 412
    ? `This ${what} was changed elsewhere meanwhile, so your change was not applied. The page now shows the latest version: review it and try again.`
    : undefined;
}

export function FlagPage(props: { name: string }) {
  const { conn, project, canWrite } = useApp();
  const etag = useRef<string | undefined>(undefined);
  const flag = useData(async () => {
    const tagged = await conn.ext.getFlag(project, props.name);
    etag.current = tagged.etag;
    return tagged.value as CountedFlag;
  }, [project, props.name]);
  const [conflict, setConflict] = useState<string | undefined>(undefined);

  /** Every edit of the flag: with If-Match, and on 412 a message and a reload. */
  const patch = async (input: Parameters<typeof conn.ext.updateFlag>[2]) => {
    try {
      const result = await conn.ext.updateFlag(project, props.name, input, etag.current);
      etag.current = result.etag;
      setConflict(undefined);
      await flag.reload();
    } catch (error) {
      const text = conflictText(error, "flag");
      if (text) {
        setConflict(text);
        await flag.reload();
      }
      throw error;
    }
  };

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
      {conflict && (
        <p className="warning" role="alert">
          {conflict}
        </p>
      )}
      <ErrorText error={flag.error} />
      <p className="muted">
        {rolloutSummary(f)} · updated {when(f.updatedAt)} · last checked {when(f.latestCheckedAt)}
      </p>
      <Description flag={f} patch={patch} />
      <StatusControl flag={f} patch={patch} />
      <Percentages flag={f} patch={patch} />
      <MembersPanel
        id="flag-actors"
        title="Attached actors"
        noun="actor"
        count={f.actorsCount}
        load={(query) => conn.ext.flagActors(project, f.name, query)}
        add={(ids) => patch({ addActors: ids })}
        remove={(id) => patch({ removeActors: [id] })}
        changed={() => void flag.reload()}
      />
      <SegmentsPanel flag={f} patch={patch} />
      <EvaluatePanel flag={f} />
      <Snippets flag={f} />
      <FlagHistory flag={f} />
      {canWrite && <DeleteFlag flag={f} etag={() => etag.current} />}
    </article>
  );
}

type Patch = (input: Parameters<ReturnType<typeof useApp>["conn"]["ext"]["updateFlag"]>[2]) => Promise<void>;

function Description(props: { flag: Flag; patch: Patch }) {
  const { canWrite } = useApp();
  const [text, setText] = useState(props.flag.description);
  const [editing, setEditing] = useState(false);
  const action = useAction();
  useEffect(() => {
    if (!editing) setText(props.flag.description);
  }, [props.flag.description, editing]);
  return (
    <form
      className="inline"
      onSubmit={async (e) => {
        e.preventDefault();
        if (await action.run(() => props.patch({ description: text }))) setEditing(false);
      }}
    >
      <label htmlFor="flag-description">Description</label>
      <input
        id="flag-description"
        value={text}
        disabled={!canWrite}
        onChange={(e) => {
          setEditing(true);
          setText(e.target.value);
        }}
      />
      <button type="submit" disabled={!canWrite || !editing || action.busy}>
        Save description
      </button>
      <ErrorText error={action.error} />
    </form>
  );
}

function StatusControl(props: { flag: Flag; patch: Patch }) {
  const { canWrite } = useApp();
  const [pending, setPending] = useState<FlagStatus | undefined>(undefined);
  const action = useAction();
  const current = props.flag.status;
  const apply = async (status: FlagStatus) => {
    setPending(undefined);
    await action.run(() => props.patch({ status }));
  };
  return (
    <section className="card" aria-labelledby="status-legend">
      <fieldset disabled={!canWrite || action.busy} aria-describedby={canWrite ? undefined : "status-ro"}>
        <legend id="status-legend">Status</legend>
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
                  if (value !== current) setPending(value);
                }}
              />
              {label} <span className="muted small">({hint})</span>
            </label>
          ))}
        </div>
      </fieldset>
      {!canWrite && (
        <p id="status-ro" className="help">
          {READ_ONLY_REASON}
        </p>
      )}
      <ErrorText error={action.error} />
      <Confirm
        open={pending !== undefined}
        title="Change the status for every caller?"
        confirmLabel={`Make it ${pending ?? ""}`}
        onConfirm={() => pending && void apply(pending)}
        onCancel={() => setPending(undefined)}
      >
        <p>
          Changing <strong>{props.flag.name}</strong> from <strong>{current}</strong> to <strong>{pending}</strong>{" "}
          affects every caller of this flag
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

function Percentages(props: { flag: Flag; patch: Patch }) {
  const { canWrite } = useApp();
  const [actors, setActors] = useState<Percentage>(props.flag.percentageActors);
  const [calls, setCalls] = useState<Percentage>(props.flag.percentageCalls);
  const [dirty, setDirty] = useState(false);
  const action = useAction();
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
        if (await action.run(() => props.patch({ percentageActors: actors, percentageCalls: calls }))) setDirty(false);
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
      <ErrorText error={action.error} />
      <div className="row">
        <button type="submit" disabled={!canWrite || !dirty || action.busy}>
          Save percentages
        </button>
        {dirty && (
          <button type="button" onClick={() => setDirty(false)}>
            Discard
          </button>
        )}
      </div>
      {!canWrite && <p className="help">{READ_ONLY_REASON}</p>}
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
  const { conn, project, canWrite } = useApp();
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
      {!canWrite && <p className="help">{READ_ONLY_REASON}</p>}
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

const REASONS: Record<Explanation["reason"], string> = {
  DISABLED: "the flag is disabled",
  STATIC: "the flag is enabled for everyone",
  TARGETING_MATCH: "a targeting rule matched",
  SPLIT: "the actor falls in the percentage rollout",
  DEFAULT: "no rule matched",
};

function EvaluatePanel(props: { flag: Flag }) {
  const { conn, project } = useApp();
  const [text, setText] = useState("");
  const [result, setResult] = useState<
    { explanation?: Explanation; checked?: boolean; fallback?: boolean } | undefined
  >();
  const action = useAction();
  return (
    <section className="card" aria-labelledby="evaluate-title">
      <h2 id="evaluate-title">Evaluate</h2>
      <form
        className="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          const ids = parseIds(text).slice(0, 100);
          await action.run(async () => {
            try {
              setResult({ explanation: await conn.ext.explain(project, props.flag.name, ids) });
            } catch (error) {
              if (!isNotAvailable(error)) throw error;
              // An older server: the check answers on or off, without why.
              setResult({
                checked: await conn.client.flags.check(project, props.flag.name, { actorIds: ids }),
                fallback: true,
              });
            }
          });
        }}
      >
        <label htmlFor="evaluate-actors">Actor ids</label>
        <input
          id="evaluate-actors"
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-describedby="evaluate-help"
        />
        <button type="submit" disabled={action.busy}>
          Evaluate
        </button>
      </form>
      <span id="evaluate-help" className="help">
        Separate several with commas or spaces; the flag is on if it is on for any of them. Nothing is recorded.
      </span>
      <ErrorText error={action.error} />
      <div aria-live="polite">
        {result?.explanation && (
          <div className="result" data-testid="evaluation">
            <p>
              <strong className={result.explanation.enabled ? "on" : "off"}>
                {result.explanation.enabled ? "Enabled" : "Not enabled"}
              </strong>
              {": "}
              {REASONS[result.explanation.reason]}
              {result.explanation.actorId && ` for ${result.explanation.actorId}`}
              {result.explanation.segment && ` (segment ${result.explanation.segment.name})`}.
              {result.explanation.callRolloutPercentage > 0 &&
                ` In addition ${result.explanation.callRolloutPercentage}% of calls are on at random.`}
            </p>
            {result.explanation.actors.length > 0 && (
              <table aria-label="Per actor">
                <thead>
                  <tr>
                    <th scope="col">Actor</th>
                    <th scope="col">Attached</th>
                    <th scope="col">Segments</th>
                    <th scope="col">Bucket</th>
                    <th scope="col">In rollout</th>
                  </tr>
                </thead>
                <tbody>
                  {result.explanation.actors.map((a) => (
                    <tr key={a.actorId}>
                      <td>{a.actorId}</td>
                      <td>{a.attached ? "yes" : "no"}</td>
                      <td>{a.segments.map((s) => s.name).join(", ") || "—"}</td>
                      <td>
                        {a.bucket.toLocaleString()} / {result.explanation!.threshold.toLocaleString()}
                      </td>
                      <td>{a.inRollout ? "yes" : "no"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
        )}
        {result?.fallback && (
          <p className="result" data-testid="evaluation">
            <strong className={result.checked ? "on" : "off"}>{result.checked ? "Enabled" : "Not enabled"}</strong>{" "}
            (this check; the explanation is not available on this server).
          </p>
        )}
      </div>
    </section>
  );
}

function Snippets(props: { flag: Flag }) {
  const { project } = useApp();
  const url = baseUrl();
  const path = `/projects/${enc(project)}/flags/${enc(props.flag.name)}/check`;
  const snippets: [string, string][] = [
    ["curl", `curl -s -H "Authorization: Bearer $FLAGSTAFF_KEY" \\\n  "${url}${path}?actorIds=alice"`],
    [
      "SDK (TypeScript)",
      `import { FlagstaffClient } from "@flagstaff/sdk";\n\nconst flagstaff = new FlagstaffClient({ baseUrl: "${url}", apiKey: process.env.FLAGSTAFF_KEY });\nconst on = await flagstaff.flags.check(${JSON.stringify(project)}, ${JSON.stringify(props.flag.name)}, { actorIds: ["alice"] });`,
    ],
    [
      "OpenFeature",
      `import { OpenFeature } from "@openfeature/server-sdk";\nimport { FlagstaffProvider } from "@flagstaff/openfeature";\n\nawait OpenFeature.setProviderAndWait(new FlagstaffProvider({ baseUrl: "${url}", apiKey: process.env.FLAGSTAFF_KEY, projectId: ${JSON.stringify(project)} }));\nconst on = await OpenFeature.getClient().getBooleanValue(${JSON.stringify(props.flag.name)}, false, { targetingKey: "alice" });`,
    ],
  ];
  return (
    <section className="card" aria-labelledby="snippets-title">
      <h2 id="snippets-title">Check this flag</h2>
      {snippets.map(([label, code]) => (
        <div key={label} className="snippet">
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

export function EventList(props: { events: FlagstaffEvent[] }) {
  return (
    <table aria-label="Events">
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">What</th>
          <th scope="col">Target</th>
          <th scope="col">Who</th>
          <th scope="col">Change</th>
        </tr>
      </thead>
      <tbody>
        {props.events.map((e) => (
          <tr key={e.id}>
            <td>{when(e.createdAt)}</td>
            <td>{e.type}</td>
            <td>{e.target.name}</td>
            <td>{"keyName" in e.actor ? `${e.actor.keyName} (${e.actor.role})` : e.actor.system}</td>
            <td className="small">{describeChange(e)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function describeChange(e: FlagstaffEvent): string {
  const before = e.before ?? {};
  const after = e.after ?? {};
  const parts: string[] = [];
  for (const key of ["name", "description", "status", "percentageActors", "percentageCalls", "url", "enabled"]) {
    if (key in after && before[key] !== after[key] && e.before !== null)
      parts.push(`${key}: ${String(before[key])} → ${String(after[key])}`);
  }
  for (const key of ["addedActors", "removedActors", "addedSegments", "removedSegments"]) {
    const ids = after[key];
    if (Array.isArray(ids) && ids.length > 0)
      parts.push(`${key} ${ids.length > 5 ? `${ids.slice(0, 5).join(", ")} … (${ids.length})` : ids.join(", ")}`);
  }
  return parts.join("; ") || (e.before === null ? "created" : e.after === null ? "deleted" : "");
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
  const [open, setOpen] = useState(false);
  const action = useAction();
  return (
    <section className="card danger-zone" aria-labelledby="delete-flag-title">
      <h2 id="delete-flag-title">Delete this flag</h2>
      <button type="button" className="danger" onClick={() => setOpen(true)}>
        Delete flag
      </button>
      <ErrorText error={action.error} />
      <Confirm
        open={open}
        danger
        title={`Delete ${props.flag.name}?`}
        confirmLabel="Delete flag"
        typeToConfirm={props.flag.name}
        onCancel={() => setOpen(false)}
        onConfirm={async () => {
          setOpen(false);
          if (await action.run(() => conn.ext.deleteFlag(project, props.flag.name, props.etag())))
            navigate(`/p/${enc(project)}/flags`);
        }}
      >
        <p>Every check of it will answer 404 from now on. Its history stays.</p>
      </Confirm>
    </section>
  );
}
