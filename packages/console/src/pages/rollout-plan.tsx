// A flag's timed rollout in the environment shown (docs/targeting.md, "Timed rollouts"): its steps with the
// one in force marked, and an editor that adds and removes actor-percentage steps, pauses and resumes the
// plan, or removes it. Steps of a rule's split weights are shown and kept (they are set through the API).
// Like every form of the flag page, its edits are a pending part of the page's one Save.
import type { Flag, Percentage, RolloutStepInput } from "@flagstaff/sdk";
import { ALLOWED_PERCENTAGES } from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import { when } from "../format.js";
import { useApp } from "../ui.js";
import { Unsaved } from "./flag-fields.js";
import { usePendingPart } from "./flag-pending.js";

type Draft = { steps: RolloutStepInput[]; paused: boolean } | null;

const draftOf = (flag: Flag): Draft =>
  flag.rolloutPlan ? { steps: flag.rolloutPlan.steps as RolloutStepInput[], paused: flag.rolloutPlan.paused } : null;

const stepText = (step: RolloutStepInput): string =>
  "ruleId" in step
    ? `rule ${step.ruleId} splits ${step.weights.map((w) => `${w.variant} ${w.weight}%`).join(", ")}`
    : `${step.percentage}% of actors`;

/** A datetime-local input's value as an instant (its local time); undefined while incomplete. */
const instantOf = (local: string): string | undefined => {
  const t = Date.parse(local);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
};

export function RolloutPlan(props: { flag: Flag }) {
  const { canWrite, readOnlyReason } = useApp();
  const f = props.flag;
  const [draft, setDraft] = useState<Draft>(() => draftOf(f));
  const [dirty, setDirty] = useState(false);
  const [at, setAt] = useState("");
  const [percentage, setPercentage] = useState<Percentage>(25);
  const saved = JSON.stringify(draftOf(f));
  const changed = dirty && JSON.stringify(draft) !== saved;
  const { generation } = usePendingPart(
    "rollout-plan",
    changed
      ? {
          tab: "targeting",
          label: "Timed rollout",
          input: { rolloutPlan: draft === null ? null : { steps: draft.steps, paused: draft.paused } },
        }
      : undefined,
  );
  useEffect(() => setDirty(false), [generation]);
  useEffect(() => {
    if (!dirty) setDraft(draftOf(f));
  }, [saved, dirty]);
  const edit = (next: Draft) => {
    setDirty(true);
    setDraft(next);
  };
  const plan = f.rolloutPlan;
  const addAt = instantOf(at);
  const add = () => {
    if (!addAt) return;
    const steps = [...(draft?.steps ?? []), { at: addAt, percentage }].sort(
      (a, b) => Date.parse(a.at) - Date.parse(b.at),
    );
    edit({ steps, paused: draft?.paused ?? false });
    setAt("");
  };
  return (
    <section className="card" aria-labelledby="plan-title" data-testid="rollout-plan">
      <h2 id="plan-title">
        Timed rollout <Unsaved shown={changed} />
      </h2>
      <p className="help">
        Steps the percentage of actors at set times, on the server and in every SDK alike: the step in force is the last
        whose time has passed. Actors once in stay in as it grows.
      </p>
      {plan && !changed && (
        <p data-testid="plan-now">
          {plan.paused ? (
            <>
              <strong>Paused</strong> since {when(plan.pausedAt)} at {plan.percentageActors}% of actors.
            </>
          ) : (
            <>
              Now <strong>{plan.percentageActors}% of actors</strong>
              {plan.nextAt ? `; next step ${when(plan.nextAt)}` : "; no step to come"}.
            </>
          )}
        </p>
      )}
      {draft && draft.steps.length > 0 ? (
        <ol className="plan-steps" aria-label="Steps">
          {draft.steps.map((step, index) => (
            <li
              key={`${step.at}-${stepText(step)}`}
              aria-current={!changed && plan?.current === index ? "step" : undefined}
              className={!changed && plan?.current === index ? "current" : undefined}
            >
              <time dateTime={step.at}>{when(step.at)}</time>: {stepText(step)}
              {!changed && plan?.current === index && <span className="badge">in force</span>}{" "}
              {canWrite && (
                <button
                  type="button"
                  className="link"
                  aria-label={`Remove the step at ${when(step.at)}`}
                  onClick={() => {
                    const steps = draft.steps.filter((_, i) => i !== index);
                    edit(steps.length === 0 ? null : { ...draft, steps });
                  }}
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ol>
      ) : (
        <p>No timed rollout.</p>
      )}
      {canWrite ? (
        <>
          <div className="row plan-add">
            <label>
              At{" "}
              <input
                type="datetime-local"
                value={at}
                aria-label="Time of the new step"
                onChange={(e) => setAt(e.target.value)}
              />
            </label>
            <label>
              Percentage{" "}
              <select
                value={percentage}
                aria-label="New step's percentage"
                onChange={(e) => setPercentage(Number(e.target.value) as Percentage)}
              >
                {ALLOWED_PERCENTAGES.map((p) => (
                  <option key={p} value={p}>
                    {p}%
                  </option>
                ))}
              </select>
            </label>
            <button type="button" disabled={!addAt} onClick={add}>
              Add step
            </button>
          </div>
          {draft && (
            <div className="row">
              <button type="button" onClick={() => edit({ ...draft, paused: !draft.paused })}>
                {draft.paused ? "Resume" : "Pause"}
              </button>
              <button type="button" onClick={() => edit(null)}>
                Remove the plan
              </button>
            </div>
          )}
          {draft?.paused && changed && (
            <p className="help">
              Paused: the step in force now holds until it is resumed; then the steps to come move later by the pause.
            </p>
          )}
        </>
      ) : (
        <p className="help">{readOnlyReason}</p>
      )}
    </section>
  );
}
