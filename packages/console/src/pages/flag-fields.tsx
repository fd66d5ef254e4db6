// The flag's own fields on its page: its description (every environment's), and its status and
// percentages in the environment shown. Each keeps its edits as a pending part of the page (see
// flag-pending.tsx): nothing is sent until the page's one Save.
import type { Flag, FlagStatus, Percentage } from "@flagstaff/sdk";
import { ALLOWED_PERCENTAGES, DESCRIPTION_MAX_LENGTH, FLAG_STATUSES } from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import { TextField, useApp } from "../ui.js";
import { usePendingPart } from "./flag-pending.js";

/** The contract's statuses (FLAG_STATUSES), each with its label and what it does. */
const STATUS_WORDS: Record<FlagStatus, [label: string, help: string]> = {
  enabled: ["Enabled", "on for every caller"],
  disabled: ["Disabled", "off for every caller"],
  conditional: ["Conditional", "on by the targeting below"],
};
const STATUS_LABELS = FLAG_STATUSES.map((s) => [s, ...STATUS_WORDS[s]] as const);

/** Says that a form holds edits the page has not saved yet. */
export function Unsaved(props: { shown: boolean }) {
  // Hidden from the accessible name of the heading it sits in: the tab and the bar say what is unsaved.
  return props.shown ? (
    <span className="badge unsaved" aria-hidden="true">
      Unsaved
    </span>
  ) : null;
}

export function Description(props: { flag: Flag }) {
  const { canWrite } = useApp();
  const saved = props.flag.description;
  const [text, setText] = useState(saved);
  const [dirty, setDirty] = useState(false);
  const changed = dirty && text !== saved;
  const { generation, refusal } = usePendingPart(
    "description",
    changed ? { tab: "settings", label: "Description", input: { description: text } } : undefined,
  );
  useEffect(() => setDirty(false), [generation]);
  useEffect(() => {
    if (!dirty) setText(saved);
  }, [saved, dirty]);
  return (
    <section className="card">
      <h2 id="description-title">
        Description <Unsaved shown={changed} />
      </h2>
      <TextField
        id="flag-description"
        label="Description"
        field="description"
        multiline
        maxLength={DESCRIPTION_MAX_LENGTH}
        value={text}
        disabled={!canWrite}
        error={refusal}
        help="The same in every environment."
        onChange={(value) => {
          setDirty(true);
          setText(value);
        }}
      />
    </section>
  );
}

export function StatusControl(props: { flag: Flag }) {
  const { canWrite, environment, readOnlyReason } = useApp();
  const where = environment?.name ?? "";
  const current = props.flag.status;
  const [choice, setChoice] = useState<FlagStatus | undefined>(undefined);
  const changed = choice !== undefined && choice !== current;
  const { generation } = usePendingPart(
    "status",
    changed ? { tab: "targeting", label: "Status", input: { status: choice } } : undefined,
  );
  useEffect(() => setChoice(undefined), [generation]);
  return (
    <section className="card" aria-labelledby="status-legend">
      <fieldset disabled={!canWrite} aria-describedby={canWrite ? undefined : "status-ro"}>
        <legend id="status-legend">
          Status in {where} <Unsaved shown={changed} />
        </legend>
        <div role="radiogroup" aria-labelledby="status-legend" className="radios">
          {STATUS_LABELS.map(([value, label, hint]) => (
            <label key={value} className="radio">
              <input
                type="radio"
                name="flag-status"
                value={value}
                checked={(choice ?? current) === value}
                onChange={() => setChoice(value)}
              />
              {label} <span className="muted small">({hint})</span>
            </label>
          ))}
        </div>
      </fieldset>
      {changed && (
        <p className="help" data-testid="status-pending">
          Saved: {current}. Changing the status changes the answer for every caller in {where} that no targeting decides
          for; the review below says how.
        </p>
      )}
      {!canWrite && (
        <p id="status-ro" className="help">
          {readOnlyReason}
        </p>
      )}
    </section>
  );
}

export function Percentages(props: { flag: Flag }) {
  const { canWrite, readOnlyReason } = useApp();
  const f = props.flag;
  const [actors, setActors] = useState<Percentage>(f.percentageActors);
  const [calls, setCalls] = useState<Percentage>(f.percentageCalls);
  const [dirty, setDirty] = useState(false);
  const changed = dirty && (actors !== f.percentageActors || calls !== f.percentageCalls);
  const { generation } = usePendingPart(
    "percentages",
    changed
      ? { tab: "targeting", label: "Percentages", input: { percentageActors: actors, percentageCalls: calls } }
      : undefined,
  );
  useEffect(() => setDirty(false), [generation]);
  useEffect(() => {
    if (!dirty) {
      setActors(f.percentageActors);
      setCalls(f.percentageCalls);
    }
  }, [f.percentageActors, f.percentageCalls, dirty]);
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
        {ALLOWED_PERCENTAGES.map((p) => (
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
    <section className="card" aria-labelledby="pct-title">
      <h2 id="pct-title">
        Percentages <Unsaved shown={changed} />
      </h2>
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
      {!canWrite && <p className="help">{readOnlyReason}</p>}
    </section>
  );
}
