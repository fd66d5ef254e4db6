// Targeting (issue 25) in the console: typed variants, the rule builder (conditions, serve, split weights
// with a live total, drag to reorder), prerequisites, a segment's conditions, and the Evaluate panel's
// attributes. Everything is checked before it is sent with core's validator (re-exported by the SDK, the
// very code the server runs); what only the server can know (a segment or a flag deleted meanwhile, a
// prerequisite cycle) comes back as a 400 or 409 whose `errors[].path` places it at the rule and condition.
// This file is the Targeting tab: on/off variants, prerequisites (prerequisites-editor.tsx) and rules, whose
// conditions are conditions-editor.tsx's; the drafts are targeting-drafts.ts's, the problems
// targeting-problems.tsx's. Variants are variants-editor.tsx's, a segment's conditions
// segment-conditions.tsx's, the Evaluate tab's attributes attributes-editor.tsx's.
import {
  DESCRIPTION_MAX_LENGTH,
  type Flag,
  RULES_MAX,
  SPLIT_BUCKETS,
  TARGETING_KEY_MAX_LENGTH,
  validateConfiguration,
} from "@flagstaff/sdk";
import { useEffect, useMemo, useRef, useState } from "react";
import { useApp } from "../ui.js";
import { errorText } from "../format.js";
import { ConditionsEditor } from "./conditions-editor.js";
import { Unsaved } from "./flag-fields.js";
import { usePendingPart } from "./flag-pending.js";
import { PrerequisitesEditor } from "./prerequisites-editor.js";
import { useSegments } from "./targeting-data.js";
import {
  evenWeights,
  newCondition,
  newKey,
  type Prerequisite,
  type PrerequisiteDraft,
  percent,
  type RuleDraft,
  ruleDrafts,
  ruleName,
  splitTotal,
  toRule,
} from "./targeting-drafts.js";
import { localMessage, parsePath, type Placed, ProblemList, serverProblems } from "./targeting-problems.js";

// ---- The rule builder: on/off variants, prerequisites, rules; one save ----

interface TargetingDraft {
  onVariant: string;
  offVariant: string;
  rules: RuleDraft[];
  prerequisites: PrerequisiteDraft[];
}

const draftOf = (f: Flag): TargetingDraft => ({
  onVariant: f.onVariant ?? "on",
  offVariant: f.offVariant ?? "off",
  rules: ruleDrafts(f.rules ?? []),
  prerequisites: (f.prerequisites ?? []).map((p) => ({ key: newKey(), flag: p.flag, variants: [...p.variants] })),
});

const toPrerequisites = (drafts: readonly PrerequisiteDraft[]): Prerequisite[] =>
  drafts.map((p) => ({ flag: p.flag, variants: p.variants }));

/** Moves the item at `from` to `to` (both indexes in the list before the move). */
function moved<T>(list: readonly T[], from: number, to: number): T[] {
  const out = [...list];
  const [item] = out.splice(from, 1);
  if (item !== undefined) out.splice(to, 0, item);
  return out;
}

const bodyOf = (draft: TargetingDraft) => ({
  rules: draft.rules.map(toRule),
  onVariant: draft.onVariant,
  offVariant: draft.offVariant,
  prerequisites: toPrerequisites(draft.prerequisites),
});

/**
 * The environment's targeting of a flag: its served variants, prerequisites and rules. The edit is a
 * pending part of the page (one PATCH at the page's Save); the server's refusal of it is shown at the
 * rule, condition or field at fault.
 */
export function TargetingPanel(props: { flag: Flag }) {
  const { canWrite, environment, readOnlyReason } = useApp();
  const f = props.flag;
  const where = environment?.name ?? "";
  const [draft, setDraft] = useState<TargetingDraft>(() => draftOf(f));
  const [dirty, setDirty] = useState(false);
  const [refused, setRefused] = useState<Placed[]>([]);
  const [announce, setAnnounce] = useState("");
  // The rule dragged and where it would drop: in refs for the drag's events (a dragover may come before
  // React renders the dragstart's state), in state for the styles.
  const [dragging, setDraggingState] = useState<number | undefined>(undefined);
  const [dropAt, setDropAtState] = useState<number | undefined>(undefined);
  const dragRef = useRef<number | undefined>(undefined);
  const setDragging = (key: number | undefined) => {
    dragRef.current = key;
    setDraggingState(key);
  };
  const setDropAt = (at: number | undefined) => setDropAtState(at);
  /** Where a drag over the rule at `i` would drop: before it in its top half, after it in its bottom half. */
  const dropIndex = (e: { clientY: number; currentTarget: Element }, i: number) => {
    const box = e.currentTarget.getBoundingClientRect();
    return e.clientY < box.top + box.height / 2 ? i : i + 1;
  };
  const dropTo = (at: number) => {
    const from = draft.rules.findIndex((x) => x.key === dragRef.current);
    if (from >= 0) move(from, at > from ? at - 1 : at);
    setDragging(undefined);
    setDropAt(undefined);
  };
  const focusAfterMove = useRef<string | undefined>(undefined);
  const segments = useSegments();
  const saved = JSON.stringify([f.onVariant, f.offVariant, f.rules, f.prerequisites]);
  const savedBody = useMemo(() => JSON.stringify(bodyOf(draftOf(f))), [saved]);
  useEffect(() => {
    if (!dirty) setDraft(draftOf(f));
  }, [saved, dirty, f.environment]);
  useEffect(() => {
    const id = focusAfterMove.current;
    if (id) {
      // The button pressed, on the rule where it is now; when the rule reached the end it is disabled, so
      // focus goes to the rule's other move button.
      const pressed = document.getElementById(id) as HTMLButtonElement | null;
      const other = document.getElementById(id.endsWith("-up") ? `${id.slice(0, -3)}-down` : `${id.slice(0, -5)}-up`);
      (pressed && !pressed.disabled ? pressed : other)?.focus();
      focusAfterMove.current = undefined;
    }
  });

  const boolean = f.type === "boolean" || f.type === undefined;
  const keys = (f.variants ?? []).map((v) => v.key);
  const edit = (next: TargetingDraft) => {
    setDirty(true);
    setDraft(next);
  };
  const setRule = (key: number, patch: Partial<RuleDraft>) =>
    edit({ ...draft, rules: draft.rules.map((r) => (r.key === key ? { ...r, ...patch } : r)) });
  const move = (from: number, to: number, focusId?: string) => {
    if (to < 0 || to >= draft.rules.length || from === to) return;
    const rule = draft.rules[from];
    focusAfterMove.current = focusId;
    edit({ ...draft, rules: moved(draft.rules, from, to) });
    setAnnounce(`${ruleName(from, rule?.id ?? "")} moved to position ${to + 1} of ${draft.rules.length}.`);
  };

  const body = bodyOf(draft);
  // Core's validator, as the server runs it (segments and other flags are the server's to check).
  const found = validateConfiguration({ name: f.name, type: f.type, variants: f.variants, ...body });
  const client: Placed[] = found.map((p) => {
    const where = parsePath(p.path);
    const rule = where.rule === undefined ? undefined : draft.rules[where.rule];
    return {
      section: where.section,
      rule: rule?.key,
      condition: where.condition === undefined ? undefined : rule?.conditions[where.condition]?.key,
      path: p.path,
      message: localMessage(p.message),
      server: false,
    };
  });
  const problems = [...client, ...refused];
  const at = (section: string) => problems.filter((p) => p.section === section && p.rule === undefined);
  const ruleIndex = (key: number | undefined) => draft.rules.findIndex((r) => r.key === key);
  const firstSplit = draft.rules.findIndex((r) => r.mode === "split" && splitTotal(r) !== SPLIT_BUCKETS);
  const blocked =
    client.length === 0
      ? undefined
      : (() => {
          const split = draft.rules[firstSplit];
          const total = split ? splitTotal(split) : undefined;
          const first =
            split && total !== undefined
              ? `${ruleName(firstSplit, split.id)}: its split totals ${percent(total)}, not 100% (${percent(Math.abs(SPLIT_BUCKETS - total))} ${total < SPLIT_BUCKETS ? "short" : "over"}).`
              : (() => {
                  const p = client[0] as Placed;
                  const i = ruleIndex(p.rule);
                  return `${i >= 0 ? `${ruleName(i, draft.rules[i]?.id ?? "")}: ` : ""}${p.message}`;
                })();
          return `${first}${client.length > 1 ? ` (${client.length} problems in all, each shown where it is.)` : ""}`;
        })();
  const changed = dirty && JSON.stringify(body) !== savedBody;
  const { generation, refusal } = usePendingPart(
    "targeting",
    changed
      ? { tab: "targeting", label: "Targeting", input: body, ...(blocked === undefined ? {} : { blocked }) }
      : undefined,
  );
  useEffect(() => {
    setDirty(false);
    setRefused([]);
  }, [generation]);
  // The server's refusal of the page's save, placed at the rules and conditions as they are now.
  useEffect(() => {
    if (refusal === undefined) return setRefused([]);
    const conditionKeys = (i: number | undefined) =>
      i === undefined ? [] : (draft.rules[i]?.conditions.map((c) => c.key) ?? []);
    setRefused(
      serverProblems(
        refusal,
        draft.rules.map((r) => r.key),
        conditionKeys,
      ),
    );
  }, [refusal]);
  const placedElsewhere = refused.length > 0;

  return (
    <section className="card targeting" aria-labelledby="targeting-title">
      <h2 id="targeting-title">
        Targeting in {where} <Unsaved shown={changed} />
      </h2>
      <p className="help">
        While the status is <strong>Conditional</strong>, a check serves the on variant to attached actors and segments,
        then the first rule below that holds decides, then the rollouts, then the off variant. Enabled serves the on
        variant to everyone, Disabled the off variant. Prerequisites come first in every status.
      </p>
      <fieldset disabled={!canWrite} className="plain-fieldset">
        <legend className="visually-hidden">Served variants</legend>
        <div className="grid2">
          {(["onVariant", "offVariant"] as const).map((field) => (
            <div className="field" key={field}>
              <label htmlFor={`targeting-${field}`}>{field === "onVariant" ? "On variant" : "Off variant"}</label>
              <select
                id={`targeting-${field}`}
                value={draft[field]}
                disabled={boolean}
                aria-describedby={`targeting-${field}-help`}
                onChange={(e) => edit({ ...draft, [field]: e.target.value })}
              >
                {keys.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
              <span id={`targeting-${field}-help`} className="help">
                {boolean
                  ? `A boolean flag's ${field === "onVariant" ? "on variant is on" : "off variant is off"}.`
                  : field === "onVariant"
                    ? "Served when enabled, to attached actors and segments, and by the rollouts."
                    : "Served when disabled, when nothing holds, and when a prerequisite fails."}
              </span>
              <ProblemList problems={at(field)} />
            </div>
          ))}
        </div>
      </fieldset>

      <PrerequisitesEditor
        flag={f}
        drafts={draft.prerequisites}
        onChange={(prerequisites) => edit({ ...draft, prerequisites })}
        problems={at("prerequisites")}
        disabled={!canWrite}
      />

      <h3 id="rules-title">Rules</h3>
      <p className="help" id="rules-help">
        In order: the first rule whose conditions all hold decides. Drag a rule by its handle, or use Move up and Move
        down, to change the order.
      </p>
      <div className="visually-hidden" aria-live="polite">
        {announce}
      </div>
      {draft.rules.length === 0 && <p className="muted">No rules.</p>}
      <ol className="plain rules" aria-labelledby="rules-title" aria-describedby="rules-help">
        {draft.rules.map((r, i) => {
          const base = `rule-${r.key}`;
          const ruleProblems = problems.filter((p) => p.rule === r.key);
          const total = r.mode === "split" ? splitTotal(r) : undefined;
          const off = total !== undefined && total !== SPLIT_BUCKETS;
          return (
            <li
              key={r.key}
              className={`rule${dragging === r.key ? " dragging" : ""}${dropAt === i && dragging !== undefined && dragging !== r.key ? " drop-before" : ""}`}
              data-testid="rule"
              data-rule-id={r.id}
              onDragOver={(e) => {
                if (dragRef.current === undefined) return;
                e.preventDefault();
                e.dataTransfer.dropEffect = "move";
                setDropAt(dropIndex(e, i));
              }}
              onDrop={(e) => {
                if (dragRef.current === undefined) return;
                e.preventDefault();
                dropTo(dropIndex(e, i));
              }}
            >
              <fieldset className="rule-box" aria-invalid={ruleProblems.length > 0 || undefined}>
                <legend>
                  <span
                    className="drag-handle"
                    draggable={canWrite}
                    title="Drag to reorder"
                    aria-hidden="true"
                    data-testid="drag-handle"
                    onDragStart={(e) => {
                      setDragging(r.key);
                      e.dataTransfer.effectAllowed = "move";
                      e.dataTransfer.setData("text/plain", r.id);
                      const li = e.currentTarget.closest("li");
                      if (li) e.dataTransfer.setDragImage(li, 16, 16);
                    }}
                    onDragEnd={() => {
                      setDragging(undefined);
                      setDropAt(undefined);
                    }}
                  >
                    ⠿
                  </span>{" "}
                  {ruleName(i, r.id)}
                </legend>
                <div className="row rule-tools">
                  <button
                    type="button"
                    id={`${base}-up`}
                    disabled={!canWrite || i === 0}
                    aria-label={`Move ${ruleName(i, r.id)} up`}
                    onClick={() => move(i, i - 1, `${base}-up`)}
                  >
                    ↑ Move up
                  </button>
                  <button
                    type="button"
                    id={`${base}-down`}
                    disabled={!canWrite || i === draft.rules.length - 1}
                    aria-label={`Move ${ruleName(i, r.id)} down`}
                    onClick={() => move(i, i + 1, `${base}-down`)}
                  >
                    ↓ Move down
                  </button>
                  <button
                    type="button"
                    className="danger"
                    disabled={!canWrite}
                    aria-label={`Remove ${ruleName(i, r.id)}`}
                    onClick={() => edit({ ...draft, rules: draft.rules.filter((x) => x.key !== r.key) })}
                  >
                    Remove rule
                  </button>
                </div>
                <fieldset disabled={!canWrite} className="plain-fieldset">
                  <legend className="visually-hidden">{ruleName(i, r.id)}: its fields</legend>
                  <div className="grid2">
                    <div className="field">
                      <label htmlFor={`${base}-id`}>Rule id</label>
                      <input
                        id={`${base}-id`}
                        value={r.id}
                        maxLength={TARGETING_KEY_MAX_LENGTH}
                        required
                        onChange={(e) => setRule(r.key, { id: e.target.value })}
                      />
                    </div>
                    <div className="field">
                      <label htmlFor={`${base}-description`}>Rule description</label>
                      <input
                        id={`${base}-description`}
                        value={r.description}
                        maxLength={DESCRIPTION_MAX_LENGTH}
                        onChange={(e) => setRule(r.key, { description: e.target.value })}
                      />
                    </div>
                  </div>
                  <ProblemList
                    problems={ruleProblems.filter(
                      // A split's sum is the live total's to show, under the weights.
                      (p) => p.condition === undefined && !(!p.server && p.path.endsWith("/serve/split/weights")),
                    )}
                    testId="rule-problems"
                  />
                  <ConditionsEditor
                    conditions={r.conditions}
                    onChange={(conditions) => setRule(r.key, { conditions })}
                    allowSegments
                    segments={segments}
                    problems={ruleProblems.filter((p) => p.condition !== undefined)}
                    disabled={!canWrite}
                    owner={ruleName(i, r.id).toLowerCase()}
                  />
                  <div className="serve">
                    <div role="radiogroup" aria-label={`${ruleName(i, r.id)} serves`} className="radios">
                      <span className="serve-label" aria-hidden="true">
                        Serve
                      </span>
                      <label className="radio">
                        <input
                          type="radio"
                          name={`${base}-mode`}
                          checked={r.mode === "variant"}
                          onChange={() => setRule(r.key, { mode: "variant", variant: r.variant || keys[0] || "" })}
                        />
                        a variant
                      </label>
                      <label className="radio">
                        <input
                          type="radio"
                          name={`${base}-mode`}
                          checked={r.mode === "split"}
                          onChange={() =>
                            setRule(r.key, {
                              mode: "split",
                              weights: Object.keys(r.weights).length > 0 ? r.weights : evenWeights(keys),
                            })
                          }
                        />
                        a split
                      </label>
                    </div>
                    {r.mode === "variant" ? (
                      <div className="field">
                        <label htmlFor={`${base}-variant`}>Variant served</label>
                        <select
                          id={`${base}-variant`}
                          value={r.variant}
                          onChange={(e) => setRule(r.key, { variant: e.target.value })}
                        >
                          {!keys.includes(r.variant) && <option value={r.variant}>{r.variant || "(choose)"}</option>}
                          {keys.map((k) => (
                            <option key={k} value={k}>
                              {k}
                            </option>
                          ))}
                        </select>
                      </div>
                    ) : (
                      <div className="split">
                        <table aria-label={`${ruleName(i, r.id)}: split weights`}>
                          <thead>
                            <tr>
                              <th scope="col">Variant</th>
                              <th scope="col">Weight (%)</th>
                            </tr>
                          </thead>
                          <tbody>
                            {keys.map((k) => (
                              <tr key={k}>
                                <th scope="row">
                                  <label htmlFor={`${base}-weight-${k}`}>{k}</label>
                                </th>
                                <td>
                                  <input
                                    id={`${base}-weight-${k}`}
                                    type="number"
                                    min={0}
                                    max={100}
                                    step={0.001}
                                    className="weight"
                                    aria-label={`Weight of ${k} (%)`}
                                    value={r.weights[k] ?? ""}
                                    aria-describedby={`${base}-total`}
                                    onChange={(e) => setRule(r.key, { weights: { ...r.weights, [k]: e.target.value } })}
                                  />
                                </td>
                              </tr>
                            ))}
                          </tbody>
                          <tfoot>
                            <tr>
                              <th scope="row">Total</th>
                              <td>
                                <output
                                  id={`${base}-total`}
                                  data-testid="split-total"
                                  className={off ? "total error" : "total ok"}
                                  aria-live="polite"
                                >
                                  {total === undefined
                                    ? "—"
                                    : off
                                      ? `${percent(total)}: ${percent(Math.abs(SPLIT_BUCKETS - total))} ${total < SPLIT_BUCKETS ? "short of" : "over"} 100%`
                                      : "100% ✓"}
                                </output>
                              </td>
                            </tr>
                          </tfoot>
                        </table>
                        <div className="field">
                          <label htmlFor={`${base}-bucket`}>Bucket by attribute</label>
                          <input
                            id={`${base}-bucket`}
                            value={r.bucketBy}
                            placeholder="the actor id"
                            list="attribute-suggestions"
                            aria-describedby={`${base}-bucket-help`}
                            onChange={(e) => setRule(r.key, { bucketBy: e.target.value })}
                          />
                          <span id={`${base}-bucket-help`} className="help">
                            Sticky: the same value keeps its variant while the weights do not change.
                          </span>
                        </div>
                      </div>
                    )}
                  </div>
                </fieldset>
              </fieldset>
            </li>
          );
        })}
      </ol>
      {dragging !== undefined && (
        // biome-ignore lint/a11y/noStaticElementInteractions: a drop zone after the last rule, for the mouse only (Move down does it by keyboard)
        <div
          className={`drop-end${dropAt === draft.rules.length ? " drop-before" : ""}`}
          onDragOver={(e) => {
            e.preventDefault();
            setDropAt(draft.rules.length);
          }}
          onDrop={(e) => {
            e.preventDefault();
            dropTo(draft.rules.length);
          }}
        />
      )}
      <button
        type="button"
        disabled={!canWrite || draft.rules.length >= RULES_MAX}
        onClick={() => {
          const taken = new Set(draft.rules.map((r) => r.id));
          let n = draft.rules.length + 1;
          while (taken.has(`rule-${n}`)) n++;
          edit({
            ...draft,
            rules: [
              ...draft.rules,
              {
                key: newKey(),
                id: `rule-${n}`,
                description: "",
                conditions: [newCondition()],
                mode: "variant",
                variant: keys[0] ?? "",
                weights: {},
                bucketBy: "",
              },
            ],
          });
        }}
      >
        Add rule
      </button>

      {placedElsewhere && (
        <p className="error" role="alert" data-testid="targeting-refused">
          Not saved: the server refused {refused.length === 1 ? "one problem" : `${refused.length} problems`}, shown at{" "}
          {refused.some((p) => p.rule !== undefined) ? "the rule at fault" : "the field at fault"}.
          {refused.some(
            (p) => p.rule === undefined && !["onVariant", "offVariant", "prerequisites"].includes(p.section),
          )
            ? ` ${errorText(refusal)}`
            : ""}
        </p>
      )}
      {!canWrite && <p className="help">{readOnlyReason}</p>}
    </section>
  );
}
