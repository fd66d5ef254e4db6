// Targeting (issue 25) in the console: typed variants, the rule builder (conditions, serve, split weights
// with a live total, drag to reorder), prerequisites, a segment's conditions, and the Evaluate panel's
// attributes. Everything is checked before it is sent with core's validator (re-exported by the SDK, the
// very code the server runs); what only the server can know (a segment or a flag deleted meanwhile, a
// prerequisite cycle) comes back as a 400 or 409 whose `errors[].path` places it at the rule and condition.
import {
  CONDITION_OPERATORS,
  type ConditionOperator,
  type ConfigurationProblem,
  type Flag,
  type FlagType,
  isFlagstaffError,
  OPERATOR_KIND,
  type OperatorKind,
  type Segment,
  type UpdateSegmentInput,
  validateConfiguration,
  validateSegmentConditions,
} from "@flagstaff/sdk";
import { useEffect, useMemo, useRef, useState } from "react";
import { ErrorText, errorText, isConflict, useAction, useApp, useData } from "../ui.js";
import { Unsaved } from "./flag-fields.js";
import { usePendingPart } from "./flag-pending.js";

type Rule = Flag["rules"][number];
type Condition = Rule["conditions"][number];
type Variant = Flag["variants"][number];
type Prerequisite = Flag["prerequisites"][number];

let nextKey = 1;
/** A key for React and for placing problems: stable while a rule or condition moves. */
const newKey = () => nextKey++;

// ---- Operators ----

type Kind = OperatorKind;

/** What each operator compares: core's table, the one the validator and the engine read. */
const KIND = OPERATOR_KIND;

const OPERATOR_LABELS: Record<ConditionOperator, string> = {
  in: "is one of",
  not_in: "is none of",
  starts_with: "starts with",
  ends_with: "ends with",
  contains: "contains",
  matches: "matches (RE2)",
  eq: "= (number)",
  gt: "> (number)",
  gte: "≥ (number)",
  lt: "< (number)",
  lte: "≤ (number)",
  semver_eq: "= (version)",
  semver_gt: "> (version)",
  semver_gte: "≥ (version)",
  semver_lt: "< (version)",
  semver_lte: "≤ (version)",
  before: "before (instant)",
  after: "after (instant)",
  present: "is set",
  in_segment: "in segment",
  not_in_segment: "not in segment",
};

const VALUES_HELP: Record<Kind, string> = {
  text: "Any of these strings. Enter or a comma adds one.",
  number: "Any of these numbers. Enter adds one.",
  semver: "Versions such as 1.2.3, v2 or 1.0.0-rc.1. Enter or a comma adds one.",
  instant: "ISO 8601 instants such as 2026-12-01T09:00:00Z ($now is the evaluation time). Enter adds one.",
  present: "No values: holds when the attribute is set.",
  segment: "An actor of the context is a member of any of these segments (listed or by its conditions).",
};

// ---- Drafts: what the forms hold, strings as typed ----

export interface ConditionDraft {
  key: number;
  attribute: string;
  operator: ConditionOperator;
  values: string[];
  /** Typed in the values box but not yet added as a value: it counts as one. */
  pending: string;
  negate: boolean;
  caseInsensitive: boolean;
}

interface RuleDraft {
  key: number;
  id: string;
  description: string;
  conditions: ConditionDraft[];
  mode: "variant" | "split";
  variant: string;
  /** Weight per variant key, as typed (percent). */
  weights: Record<string, string>;
  bucketBy: string;
}

interface PrerequisiteDraft {
  key: number;
  flag: string;
  variants: string[];
}

export function newCondition(operator: ConditionOperator = "in"): ConditionDraft {
  return { key: newKey(), attribute: "", operator, values: [], pending: "", negate: false, caseInsensitive: false };
}

export function conditionDrafts(conditions: readonly Condition[]): ConditionDraft[] {
  return conditions.map((c) => ({
    key: newKey(),
    attribute: c.attribute ?? "",
    operator: c.operator,
    values: c.values.map(String),
    pending: "",
    negate: c.negate === true,
    caseInsensitive: c.caseInsensitive === true,
  }));
}

/** A condition as the API takes it; numbers for number operators (a value that is not one stays text, so the validator names it). */
export function toCondition(d: ConditionDraft): Condition {
  const kind = KIND[d.operator];
  const raw = d.pending.trim() === "" ? d.values : [...d.values, d.pending.trim()];
  const values =
    kind === "present"
      ? []
      : kind === "number"
        ? raw.map((v) => (v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v))
        : raw;
  return {
    ...(kind === "segment" ? {} : { attribute: d.attribute.trim() }),
    operator: d.operator,
    values,
    ...(d.negate ? { negate: true } : {}),
    ...(d.caseInsensitive && kind === "text" ? { caseInsensitive: true } : {}),
  } as Condition;
}

/** Even weights that sum to 100 (in thousandths), the first variant taking the remainder. */
function evenWeights(keys: readonly string[]): Record<string, string> {
  if (keys.length === 0) return {};
  const each = Math.floor(100_000 / keys.length);
  const first = 100_000 - each * (keys.length - 1);
  return Object.fromEntries(keys.map((k, i) => [k, String((i === 0 ? first : each) / 1000)]));
}

function ruleDrafts(rules: readonly Rule[]): RuleDraft[] {
  return rules.map((r) => {
    const split = "split" in r.serve ? r.serve.split : undefined;
    return {
      key: newKey(),
      id: r.id,
      description: r.description ?? "",
      conditions: conditionDrafts(r.conditions),
      mode: split ? "split" : "variant",
      variant: "variant" in r.serve ? r.serve.variant : "",
      weights: split ? Object.fromEntries(split.weights.map((w) => [w.variant, String(w.weight)])) : {},
      bucketBy: split?.bucketBy ?? "",
    };
  });
}

function toRule(d: RuleDraft): Rule {
  const weights = Object.entries(d.weights)
    .filter(([, w]) => w.trim() !== "")
    .map(([variant, w]) => ({ variant, weight: Number(w) }));
  return {
    id: d.id.trim(),
    ...(d.description.trim() !== "" ? { description: d.description } : {}),
    conditions: d.conditions.map(toCondition),
    serve:
      d.mode === "variant"
        ? { variant: d.variant }
        : { split: { ...(d.bucketBy.trim() !== "" ? { bucketBy: d.bucketBy.trim() } : {}), weights } },
  } as Rule;
}

/** A split's total in thousandths of a percent (what the validator sums), from the weights as typed. */
function splitTotal(d: RuleDraft): number | undefined {
  let total = 0;
  for (const w of Object.values(d.weights)) {
    if (w.trim() === "") continue;
    const n = Number(w);
    if (!Number.isFinite(n)) return undefined;
    total += Math.round(n * 1000);
  }
  return total;
}

const percent = (thousandths: number) => `${(thousandths / 1000).toLocaleString("en", { maximumFractionDigits: 3 })}%`;

/** "Rule 2 “split”". */
const ruleName = (index: number, id: string) => `Rule ${index + 1}${id.trim() ? ` “${id.trim()}”` : ""}`;

// ---- Problems: the validator's and the server's, placed at the rule and condition at fault ----

/** A problem where it is shown: at a rule (and condition) by their keys, or in a section of the form. */
export interface Placed {
  rule?: number;
  condition?: number;
  /** The first part of the path: "rules", "onVariant", "prerequisites", "variants", "conditions"… */
  section: string;
  path: string;
  message: string;
  server: boolean;
}

/** The message without the place it starts with (`rules[2] "eu", conditions[0], values[1]: …` → `values[1]: …`): the form shows the place. */
export function localMessage(message: string): string {
  return message
    .replace(/^rules\[\d+\](?: "(?:[^"\\]|\\.)*")?(?:, |(?=:))?/, "")
    .replace(/^conditions\[\d+\](?:, |(?=:))?/, "")
    .replace(/^: /, "");
}

/** Where an error path points: `/rules/1/conditions/0/values/2` (a `/body` prefix of schema errors too). */
export function parsePath(path: string): { section: string; rule?: number; condition?: number } {
  const parts = path.split("/").filter((p) => p !== "" && p !== "body");
  const section = parts[0] ?? "";
  if (section === "rules" && parts[1] !== undefined && /^\d+$/.test(parts[1])) {
    const rule = Number(parts[1]);
    const condition = parts[2] === "conditions" && parts[3] && /^\d+$/.test(parts[3]) ? Number(parts[3]) : undefined;
    return { section, rule, condition };
  }
  if (section === "conditions" && parts[1] !== undefined && /^\d+$/.test(parts[1])) {
    return { section, condition: Number(parts[1]) };
  }
  return { section };
}

/** The problems of a validation answer (400/409 with `errors`), placed by the rules and conditions sent. */
function serverProblems(
  error: unknown,
  ruleKeys: readonly number[],
  conditionKeys: (rule: number | undefined) => readonly number[],
): Placed[] {
  if (!isFlagstaffError(error) || error.errors.length === 0) return [];
  return error.errors.map((e) => {
    const where = parsePath(e.path);
    return {
      section: where.section,
      rule: where.rule === undefined ? undefined : ruleKeys[where.rule],
      condition: where.condition === undefined ? undefined : conditionKeys(where.rule)[where.condition],
      path: e.path,
      message: localMessage(e.message),
      server: true,
    };
  });
}

function ProblemList(props: { problems: readonly Placed[]; testId?: string }) {
  if (props.problems.length === 0) return null;
  const server = props.problems.some((p) => p.server);
  return (
    // The alert wraps the list: on the <ul> itself its role would hide the list from assistive technology.
    <div role={server ? "alert" : undefined} data-testid={props.testId}>
      <ul className="plain problems">
        {props.problems.map((p, i) => (
          <li key={i} className="error field-error">
            {p.server ? "Refused by the server: " : ""}
            {p.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

// ---- Values: a list of chips, a segment picker, or nothing ----

function ChipsInput(props: {
  id: string;
  kind: Kind;
  operator: ConditionOperator;
  values: string[];
  pending: string;
  disabled: boolean;
  invalid: boolean;
  describedBy: string;
  onChange: (values: string[], pending: string) => void;
}) {
  // A regular expression may hold commas: only Enter adds one. Numbers cannot hold one.
  const splitsOnComma = props.operator !== "matches" && props.kind !== "number";
  const commit = () => {
    const v = props.pending.trim();
    if (v !== "") props.onChange([...props.values, v], "");
  };
  return (
    <div className="chips">
      {props.values.length > 0 && (
        <ul className="plain chip-list" aria-label="Chosen values">
          {props.values.map((v, i) => (
            <li key={i} className="chip">
              <span>{v}</span>
              <button
                type="button"
                className="chip-remove"
                disabled={props.disabled}
                aria-label={`Remove value ${v}`}
                onClick={() =>
                  props.onChange(
                    props.values.filter((_, j) => j !== i),
                    props.pending,
                  )
                }
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <input
        id={props.id}
        type={props.kind === "number" ? "number" : "text"}
        step={props.kind === "number" ? "any" : undefined}
        value={props.pending}
        disabled={props.disabled}
        aria-invalid={props.invalid || undefined}
        aria-describedby={props.describedBy}
        placeholder={
          props.kind === "number"
            ? "42"
            : props.kind === "semver"
              ? "1.2.3"
              : props.kind === "instant"
                ? "2026-12-01T09:00:00Z"
                : "value"
        }
        onChange={(e) => {
          const text = e.target.value;
          if (splitsOnComma && text.includes(",")) {
            const parts = text.split(",");
            const last = parts.pop() ?? "";
            const added = parts.map((p) => p.trim()).filter((p) => p !== "");
            props.onChange([...props.values, ...added], last.trimStart());
          } else {
            props.onChange(props.values, text);
          }
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            commit();
          } else if (e.key === "Backspace" && props.pending === "" && props.values.length > 0) {
            props.onChange(props.values.slice(0, -1), "");
          }
        }}
        onBlur={commit}
      />
    </div>
  );
}

function SegmentValues(props: {
  id: string;
  values: string[];
  segments: readonly Segment[] | undefined;
  disabled: boolean;
  invalid: boolean;
  describedBy: string;
  onChange: (values: string[]) => void;
}) {
  const name = (id: string) => {
    const s = props.segments?.find((x) => x.id === id);
    return s ? s.name : props.segments ? `${id} (not found)` : id;
  };
  const left = (props.segments ?? []).filter((s) => !props.values.includes(s.id));
  return (
    <div className="chips">
      {props.values.length > 0 && (
        <ul className="plain chip-list" aria-label="Chosen segments">
          {props.values.map((v) => (
            <li key={v} className="chip">
              <span>{name(v)}</span>
              <button
                type="button"
                className="chip-remove"
                disabled={props.disabled}
                aria-label={`Remove segment ${name(v)}`}
                onClick={() => props.onChange(props.values.filter((x) => x !== v))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <select
        id={props.id}
        value=""
        disabled={props.disabled || props.segments === undefined}
        aria-invalid={props.invalid || undefined}
        aria-describedby={props.describedBy}
        onChange={(e) => e.target.value && props.onChange([...props.values, e.target.value])}
      >
        <option value="">{props.segments === undefined ? "Loading segments…" : "Add a segment…"}</option>
        {left.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name}
          </option>
        ))}
      </select>
    </div>
  );
}

// ---- A condition, and a list of them ----

function ConditionRow(props: {
  index: number;
  condition: ConditionDraft;
  allowSegments: boolean;
  segments: readonly Segment[] | undefined;
  problems: readonly Placed[];
  disabled: boolean;
  onChange: (c: ConditionDraft) => void;
  onRemove: () => void;
}) {
  const c = props.condition;
  const kind = KIND[c.operator];
  const base = `cond-${c.key}`;
  const invalid = props.problems.length > 0;
  const operators = CONDITION_OPERATORS.filter((o) => props.allowSegments || KIND[o] !== "segment");
  const set = (patch: Partial<ConditionDraft>) => props.onChange({ ...c, ...patch });
  const describedBy = `${base}-help${invalid ? ` ${base}-problems` : ""}`;
  return (
    <fieldset className="condition" data-testid="condition" aria-invalid={invalid || undefined}>
      <legend>Condition {props.index + 1}</legend>
      <div className="condition-fields">
        {kind !== "segment" && (
          <div className="field">
            <label htmlFor={`${base}-attribute`}>Attribute</label>
            <input
              id={`${base}-attribute`}
              value={c.attribute}
              list="attribute-suggestions"
              placeholder="country"
              maxLength={128}
              disabled={props.disabled}
              onChange={(e) => set({ attribute: e.target.value })}
            />
          </div>
        )}
        <div className="field">
          <label htmlFor={`${base}-operator`}>Operator</label>
          <select
            id={`${base}-operator`}
            value={c.operator}
            disabled={props.disabled}
            onChange={(e) => {
              const operator = e.target.value as ConditionOperator;
              const same = KIND[operator] === kind;
              set({
                operator,
                values: same ? c.values : [],
                pending: same ? c.pending : "",
                caseInsensitive: KIND[operator] === "text" && c.caseInsensitive,
              });
            }}
          >
            {operators.map((o) => (
              <option key={o} value={o}>
                {o} — {OPERATOR_LABELS[o]}
              </option>
            ))}
          </select>
        </div>
        <div className="field values-field">
          <label htmlFor={`${base}-values`}>{kind === "segment" ? "Segments" : "Values"}</label>
          {kind === "present" ? (
            <p className="muted small" id={`${base}-values`}>
              none
            </p>
          ) : kind === "segment" ? (
            <SegmentValues
              id={`${base}-values`}
              values={c.values}
              segments={props.segments}
              disabled={props.disabled}
              invalid={invalid}
              describedBy={describedBy}
              onChange={(values) => set({ values })}
            />
          ) : (
            <ChipsInput
              id={`${base}-values`}
              kind={kind}
              operator={c.operator}
              values={c.values}
              pending={c.pending}
              disabled={props.disabled}
              invalid={invalid}
              describedBy={describedBy}
              onChange={(values, pending) => set({ values, pending })}
            />
          )}
          <span id={`${base}-help`} className="help">
            {c.operator === "matches" ? "RE2 regular expressions (linear time). Enter adds one." : VALUES_HELP[kind]}
          </span>
        </div>
      </div>
      <div className="row condition-toggles">
        <label className="check">
          <input
            type="checkbox"
            checked={c.negate}
            disabled={props.disabled}
            onChange={(e) => set({ negate: e.target.checked })}
          />
          Negate
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={c.caseInsensitive && kind === "text"}
            disabled={props.disabled || kind !== "text"}
            onChange={(e) => set({ caseInsensitive: e.target.checked })}
          />
          Ignore case
        </label>
        <button
          type="button"
          disabled={props.disabled}
          aria-label={`Remove condition ${props.index + 1}`}
          onClick={props.onRemove}
        >
          Remove condition
        </button>
      </div>
      <div id={`${base}-problems`}>
        <ProblemList problems={props.problems} testId="condition-problems" />
      </div>
    </fieldset>
  );
}

/** Attribute names offered while typing one (any other is allowed). */
const ATTRIBUTE_SUGGESTIONS = ["country", "plan", "email", "appVersion", "platform", "$now"];

export function ConditionsEditor(props: {
  conditions: ConditionDraft[];
  onChange: (conditions: ConditionDraft[]) => void;
  allowSegments: boolean;
  segments: readonly Segment[] | undefined;
  problems: readonly Placed[];
  disabled: boolean;
  /** "Add condition" names what it adds to: "rule 2". */
  owner: string;
}) {
  return (
    <div className="conditions">
      {props.conditions.length === 0 && (
        <p className="muted small">
          No conditions: {props.allowSegments ? "the rule holds for every context." : "listed members only."}
        </p>
      )}
      {props.conditions.map((c, i) => (
        <ConditionRow
          key={c.key}
          index={i}
          condition={c}
          allowSegments={props.allowSegments}
          segments={props.segments}
          problems={props.problems.filter((p) => p.condition === c.key)}
          disabled={props.disabled}
          onChange={(next) => props.onChange(props.conditions.map((x) => (x.key === c.key ? next : x)))}
          onRemove={() => props.onChange(props.conditions.filter((x) => x.key !== c.key))}
        />
      ))}
      <button
        type="button"
        disabled={props.disabled || props.conditions.length >= 20}
        onClick={() => props.onChange([...props.conditions, newCondition()])}
      >
        Add condition{props.owner ? <span className="visually-hidden"> to {props.owner}</span> : null}
      </button>
    </div>
  );
}

/** The attribute names offered by every condition's attribute box. */
export function AttributeSuggestions() {
  return (
    <datalist id="attribute-suggestions">
      {ATTRIBUTE_SUGGESTIONS.map((a) => (
        <option key={a} value={a} />
      ))}
    </datalist>
  );
}

// ---- Variants ----

export interface VariantRow {
  key: number;
  variantKey: string;
  value: string;
  description: string;
}

export const variantRows = (variants: readonly Variant[]): VariantRow[] =>
  variants.map((v) => ({
    key: newKey(),
    variantKey: v.key,
    value: typeof v.value === "string" ? v.value : JSON.stringify(v.value, null, typeof v.value === "object" ? 2 : 0),
    description: v.description ?? "",
  }));

export const emptyVariantRows = (): VariantRow[] => [
  { key: newKey(), variantKey: "", value: "", description: "" },
  { key: newKey(), variantKey: "", value: "", description: "" },
];

/** The variants as the API takes them; a JSON value that does not parse is a problem of its own. */
export function toVariants(type: FlagType, rows: readonly VariantRow[]): { variants: Variant[]; problems: Placed[] } {
  const problems: Placed[] = [];
  const variants = rows.map((r, i) => {
    let value: unknown = r.value;
    if (type === "number")
      value = r.value.trim() !== "" && Number.isFinite(Number(r.value)) ? Number(r.value) : r.value;
    if (type === "object") {
      try {
        value = JSON.parse(r.value);
      } catch (e) {
        problems.push({
          section: "variants",
          condition: r.key,
          path: `/variants/${i}/value`,
          message: `value: not valid JSON (${e instanceof Error ? e.message : String(e)})`,
          server: false,
        });
        value = undefined;
      }
    }
    return {
      key: r.variantKey.trim(),
      ...(value === undefined ? {} : { value }),
      ...(r.description.trim() !== "" ? { description: r.description } : {}),
    } as Variant;
  });
  return { variants, problems };
}

/** Problems of variants placed at their rows (the row's key in `condition`). */
function placeVariantProblems(problems: readonly Placed[], rows: readonly VariantRow[]): Placed[] {
  return problems.map((p) => {
    const m = /^\/(?:body\/)?variants\/(\d+)/.exec(p.path);
    const row = m ? rows[Number(m[1])] : undefined;
    return row
      ? { ...p, condition: row.key, message: localMessage(p.message).replace(/^variants\[\d+\](?:\.|: )?/, "") }
      : p;
  });
}

export function VariantsEditor(props: {
  type: FlagType;
  rows: VariantRow[];
  onChange: (rows: VariantRow[]) => void;
  problems: readonly Placed[];
  disabled: boolean;
}) {
  const set = (key: number, patch: Partial<VariantRow>) =>
    props.onChange(props.rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const valueHelp =
    props.type === "object"
      ? "A JSON object or array (at most 32 KiB)."
      : props.type === "number"
        ? "A finite number."
        : "Any text.";
  const general = props.problems.filter((p) => p.condition === undefined);
  return (
    <div className="variants-editor">
      <ol className="plain variant-rows" aria-label="Variants">
        {props.rows.map((r, i) => {
          const base = `variant-${r.key}`;
          const rowProblems = props.problems.filter((p) => p.condition === r.key);
          return (
            <li key={r.key} className="variant-row" data-testid="variant-row">
              <div className="field">
                <label htmlFor={`${base}-key`}>Key {i + 1}</label>
                <input
                  id={`${base}-key`}
                  value={r.variantKey}
                  maxLength={64}
                  pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}"
                  disabled={props.disabled}
                  onChange={(e) => set(r.key, { variantKey: e.target.value })}
                />
              </div>
              <div className="field">
                <label htmlFor={`${base}-value`}>Value {i + 1}</label>
                {props.type === "object" ? (
                  <textarea
                    id={`${base}-value`}
                    rows={3}
                    className="mono"
                    value={r.value}
                    placeholder='{"color": "blue"}'
                    disabled={props.disabled}
                    aria-describedby={`${base}-value-help`}
                    onChange={(e) => set(r.key, { value: e.target.value })}
                  />
                ) : (
                  <input
                    id={`${base}-value`}
                    type={props.type === "number" ? "number" : "text"}
                    step={props.type === "number" ? "any" : undefined}
                    value={r.value}
                    disabled={props.disabled}
                    aria-describedby={`${base}-value-help`}
                    onChange={(e) => set(r.key, { value: e.target.value })}
                  />
                )}
                <span id={`${base}-value-help`} className="visually-hidden">
                  {valueHelp}
                </span>
              </div>
              <div className="field">
                <label htmlFor={`${base}-description`}>Description {i + 1}</label>
                <input
                  id={`${base}-description`}
                  value={r.description}
                  maxLength={1024}
                  disabled={props.disabled}
                  onChange={(e) => set(r.key, { description: e.target.value })}
                />
              </div>
              <button
                type="button"
                className="variant-remove"
                disabled={props.disabled || props.rows.length <= 2}
                aria-label={`Remove variant ${i + 1}${r.variantKey ? ` (${r.variantKey})` : ""}`}
                onClick={() => props.onChange(props.rows.filter((x) => x.key !== r.key))}
              >
                Remove
              </button>
              {rowProblems.length > 0 && (
                <div className="variant-problems">
                  <ProblemList problems={rowProblems} />
                </div>
              )}
            </li>
          );
        })}
      </ol>
      <p className="help">
        2–50 variants; each key 1–64 letters, digits and <code>. _ -</code>. Values: {valueHelp.toLowerCase()}
      </p>
      <button
        type="button"
        disabled={props.disabled || props.rows.length >= 50}
        onClick={() => props.onChange([...props.rows, { key: newKey(), variantKey: "", value: "", description: "" }])}
      >
        Add variant
      </button>
      <ProblemList problems={general} />
    </div>
  );
}

/** The keys offered by on/off and serve selects: the rows' keys that are set. */
const keysOf = (rows: readonly VariantRow[]) => [...new Set(rows.map((r) => r.variantKey.trim()).filter(Boolean))];

/** The create form's type, variants and on/off variants, with their problems (shown after a first submit). */
export function NewFlagTargeting(props: {
  type: FlagType;
  onType: (t: FlagType) => void;
  rows: VariantRow[];
  onRows: (rows: VariantRow[]) => void;
  onVariant: string;
  offVariant: string;
  onOn: (key: string) => void;
  onOff: (key: string) => void;
  problems: readonly Placed[];
}) {
  const keys = keysOf(props.rows);
  const onOff = (id: string, label: string, value: string, set: (k: string) => void, fallback: number) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value || keys[fallback] || ""} onChange={(e) => set(e.target.value)}>
        {keys.length === 0 && <option value="">(name the variants first)</option>}
        {keys.map((k) => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <>
      <div className="field">
        <label htmlFor="new-flag-type">Type</label>
        <select
          id="new-flag-type"
          value={props.type}
          aria-describedby="new-flag-type-help"
          onChange={(e) => props.onType(e.target.value as FlagType)}
        >
          <option value="boolean">boolean (on / off)</option>
          <option value="string">string</option>
          <option value="number">number</option>
          <option value="object">object (JSON)</option>
        </select>
        <span id="new-flag-type-help" className="help">
          Set once: it cannot be changed later. A boolean flag's variants are on (true) and off (false).
        </span>
      </div>
      {props.type !== "boolean" && (
        <fieldset className="new-flag-variants">
          <legend>Variants</legend>
          <VariantsEditor
            type={props.type}
            rows={props.rows}
            onChange={props.onRows}
            problems={placeVariantProblems(
              props.problems.filter((p) => p.section === "variants"),
              props.rows,
            )}
            disabled={false}
          />
          <div className="grid2">
            {onOff("new-flag-on", "On variant (served when enabled)", props.onVariant, props.onOn, 0)}
            {onOff(
              "new-flag-off",
              "Off variant (served when disabled or by default)",
              props.offVariant,
              props.onOff,
              1,
            )}
          </div>
          <ProblemList
            problems={props.problems.filter((p) => p.section === "onVariant" || p.section === "offVariant")}
          />
        </fieldset>
      )}
    </>
  );
}

/** The create form's problems, by core's validator: the variants and the on/off keys. */
export function newFlagProblems(
  name: string,
  type: FlagType,
  rows: readonly VariantRow[],
  onVariant: string,
  offVariant: string,
): { problems: Placed[]; variants: Variant[]; onVariant?: string; offVariant?: string } {
  if (type === "boolean") return { problems: [], variants: [] };
  const keys = keysOf(rows);
  const on = onVariant && keys.includes(onVariant) ? onVariant : keys[0];
  const off = offVariant && keys.includes(offVariant) ? offVariant : keys[1];
  const { variants, problems } = toVariants(type, rows);
  const found = validateConfiguration({ name, type, variants, onVariant: on, offVariant: off });
  return { problems: [...problems, ...found.map(placedOf)], variants, onVariant: on, offVariant: off };
}

const placedOf = (p: ConfigurationProblem): Placed => ({
  section: parsePath(p.path).section,
  path: p.path,
  message: p.message,
  server: false,
});

/**
 * A flag's variants on its page: read-only for a boolean flag, else editable; the edit is a pending part
 * of the page (PATCH {variants} at the page's one Save).
 */
export function VariantsPanel(props: { flag: Flag }) {
  const { canWrite } = useApp();
  const f = props.flag;
  const [rows, setRows] = useState<VariantRow[]>(() => variantRows(f.variants ?? []));
  const [dirty, setDirty] = useState(false);
  const seen = JSON.stringify(f.variants);
  const typed = f.type !== "boolean" && f.type !== undefined;
  const { variants, problems: parseProblems } = typed ? toVariants(f.type, rows) : { variants: [], problems: [] };
  const checked = typed
    ? validateConfiguration({ name: f.name, type: f.type, variants })
        .filter((p) => p.path.startsWith("/variants"))
        .map(placedOf)
    : [];
  const problems = placeVariantProblems([...parseProblems, ...checked], rows);
  const changed = typed && dirty && JSON.stringify(variants) !== seen;
  const first = problems[0];
  const { generation } = usePendingPart(
    "variants",
    changed
      ? {
          tab: "variants",
          label: "Variants",
          input: { variants },
          ...(first
            ? { blocked: `${problems.length > 1 ? `${problems.length} problems; first: ` : ""}${first.message}` }
            : {}),
        }
      : undefined,
  );
  useEffect(() => setDirty(false), [generation]);
  useEffect(() => {
    if (!dirty) setRows(variantRows(f.variants ?? []));
  }, [seen, dirty]);
  if (!typed) {
    return (
      <section className="card" aria-labelledby="variants-title">
        <h2 id="variants-title">Variants</h2>
        <p>
          A boolean flag: it serves <code>on</code> (true) or <code>off</code> (false).
        </p>
      </section>
    );
  }
  const edit = (next: VariantRow[]) => {
    setDirty(true);
    setRows(next);
  };
  return (
    <section className="card" aria-labelledby="variants-title">
      <h2 id="variants-title">
        Variants <Unsaved shown={changed} />
      </h2>
      <p className="help">
        A {f.type} flag. Its variants are the same in every environment; a key still served or named by a rule, a split
        or a prerequisite anywhere cannot be removed.
      </p>
      <VariantsEditor type={f.type} rows={rows} onChange={edit} problems={problems} disabled={!canWrite} />
    </section>
  );
}

// ---- The project's segments and flags, for pickers ----

async function allPages<T>(
  list: (after?: string) => Promise<{ data: T[]; pagination: { after: string | null } }>,
  max = 20,
): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < max; i++) {
    const page = await list(after);
    out.push(...page.data);
    if (!page.pagination.after) break;
    after = page.pagination.after;
  }
  return out;
}

function useSegments(): readonly Segment[] | undefined {
  const { conn, project } = useApp();
  // Read once per page (no polling): a segment deleted meanwhile is the server's to refuse, at its rule.
  return useData(
    () => allPages((after) => conn.client.segments.list(project).page({ limit: 100, after })),
    [project],
    0,
  ).data;
}

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
  const firstSplit = draft.rules.findIndex((r) => r.mode === "split" && splitTotal(r) !== 100_000);
  const blocked =
    client.length === 0
      ? undefined
      : (() => {
          const split = draft.rules[firstSplit];
          const total = split ? splitTotal(split) : undefined;
          const first =
            split && total !== undefined
              ? `${ruleName(firstSplit, split.id)}: its split totals ${percent(total)}, not 100% (${percent(Math.abs(100_000 - total))} ${total < 100_000 ? "short" : "over"}).`
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
          const off = total !== undefined && total !== 100_000;
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
                        maxLength={64}
                        required
                        onChange={(e) => setRule(r.key, { id: e.target.value })}
                      />
                    </div>
                    <div className="field">
                      <label htmlFor={`${base}-description`}>Rule description</label>
                      <input
                        id={`${base}-description`}
                        value={r.description}
                        maxLength={1024}
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
                                      ? `${percent(total)}: ${percent(Math.abs(100_000 - total))} ${total < 100_000 ? "short of" : "over"} 100%`
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
        disabled={!canWrite || draft.rules.length >= 100}
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

// ---- Prerequisites ----

function PrerequisitesEditor(props: {
  flag: Flag;
  drafts: PrerequisiteDraft[];
  onChange: (drafts: PrerequisiteDraft[]) => void;
  problems: readonly Placed[];
  disabled: boolean;
}) {
  const { conn, project } = useApp();
  const flags = useData(
    () => allPages((after) => conn.client.flags.list(project).page({ limit: 100, after }), 10),
    [project],
    0,
  );
  const others = (flags.data ?? []).filter((x) => x.name !== props.flag.name);
  const set = (key: number, patch: Partial<PrerequisiteDraft>) =>
    props.onChange(props.drafts.map((d) => (d.key === key ? { ...d, ...patch } : d)));
  const problemsOf = (i: number) =>
    props.problems.filter((p) => new RegExp(`^/(?:body/)?prerequisites/${i}(/|$)`).test(p.path));
  const general = props.problems.filter((p) => !/^\/(?:body\/)?prerequisites\/\d+/.test(p.path));
  return (
    <section className="prerequisites" aria-labelledby="prerequisites-title">
      <h3 id="prerequisites-title">Prerequisites</h3>
      <p className="help">
        This flag is evaluated only when each flag below, evaluated for the same context in this environment, serves one
        of the ticked variants; otherwise it serves its off variant (PREREQUISITE_FAILED).
      </p>
      {props.drafts.length === 0 && <p className="muted small">None.</p>}
      <ul className="plain">
        {props.drafts.map((d, i) => {
          const target = others.find((x) => x.name === d.flag);
          const variants = target ? target.variants.map((v) => v.key) : d.variants;
          return (
            <li key={d.key} className="prerequisite" data-testid="prerequisite">
              <fieldset disabled={props.disabled}>
                <legend className="prerequisite-legend">Prerequisite {i + 1}</legend>
                <div className="field">
                  <label htmlFor={`prereq-${d.key}-flag`}>Flag</label>
                  <select
                    id={`prereq-${d.key}-flag`}
                    value={d.flag}
                    onChange={(e) => {
                      const chosen = others.find((x) => x.name === e.target.value);
                      set(d.key, {
                        flag: e.target.value,
                        variants: chosen?.variants[0] ? [chosen.variants[0].key] : [],
                      });
                    }}
                  >
                    {!target && <option value={d.flag}>{d.flag || "(choose a flag)"}</option>}
                    {others.map((x) => (
                      <option key={x.id} value={x.name}>
                        {x.name} ({x.type})
                      </option>
                    ))}
                  </select>
                </div>
                <fieldset className="plain-fieldset">
                  <legend>Must serve one of</legend>
                  <div className="row">
                    {variants.map((k) => (
                      <label key={k} className="check">
                        <input
                          type="checkbox"
                          checked={d.variants.includes(k)}
                          onChange={(e) =>
                            set(d.key, {
                              variants: e.target.checked ? [...d.variants, k] : d.variants.filter((v) => v !== k),
                            })
                          }
                        />
                        {k}
                      </label>
                    ))}
                  </div>
                </fieldset>
                <button
                  type="button"
                  aria-label={`Remove prerequisite ${i + 1}${d.flag ? ` (${d.flag})` : ""}`}
                  onClick={() => props.onChange(props.drafts.filter((x) => x.key !== d.key))}
                >
                  Remove prerequisite
                </button>
                <ProblemList
                  problems={problemsOf(i).map((p) => ({
                    ...p,
                    message: p.message.replace(/^prerequisites\[\d+\](?:\.|: )?/, ""),
                  }))}
                />
              </fieldset>
            </li>
          );
        })}
      </ul>
      <ErrorText error={flags.error} />
      <button
        type="button"
        disabled={props.disabled || props.drafts.length >= 20 || flags.data === undefined}
        onClick={() => {
          const first = others.find((x) => !props.drafts.some((d) => d.flag === x.name));
          props.onChange([
            ...props.drafts,
            { key: newKey(), flag: first?.name ?? "", variants: first?.variants[0] ? [first.variants[0].key] : [] },
          ]);
        }}
      >
        Add prerequisite
      </button>
      <ProblemList problems={general} />
    </section>
  );
}

// ---- A segment's conditions ----

export function SegmentConditionsPanel(props: {
  segment: Segment;
  patch: (input: UpdateSegmentInput, basis?: string) => Promise<void>;
  etag: () => string | undefined;
}) {
  const { canWrite, readOnlyReason } = useApp();
  const s = props.segment;
  const [conditions, setConditions] = useState<ConditionDraft[]>(() => conditionDrafts(s.conditions ?? []));
  const [dirty, setDirty] = useState(false);
  const [refused, setRefused] = useState<Placed[]>([]);
  const basis = useRef<string | undefined>(undefined);
  const action = useAction();
  const saved = JSON.stringify(s.conditions ?? []);
  useEffect(() => {
    if (!dirty) setConditions(conditionDrafts(s.conditions ?? []));
  }, [saved, dirty]);
  const body = conditions.map(toCondition);
  const client: Placed[] = validateSegmentConditions(body).map((p) => {
    const where = parsePath(p.path);
    return {
      section: "conditions",
      condition: where.condition === undefined ? undefined : conditions[where.condition]?.key,
      path: p.path,
      message: localMessage(p.message),
      server: false,
    };
  });
  const problems = [...client, ...refused];
  const reason = !canWrite
    ? readOnlyReason
    : client.length > 0
      ? `Cannot save yet: condition ${conditions.findIndex((c) => c.key === client[0]?.condition) + 1}: ${client[0]?.message}`
      : !dirty
        ? "No changes to save."
        : undefined;
  return (
    <form
      className="card"
      aria-labelledby="segment-conditions-title"
      onSubmit={async (e) => {
        e.preventDefault();
        if (reason !== undefined) return;
        setRefused([]);
        const keys = conditions.map((c) => c.key);
        let error: unknown;
        const ok = await action.run(async () => {
          try {
            await props.patch({ conditions: body }, basis.current);
          } catch (err) {
            error = err;
            throw err;
          }
        });
        if (ok || isConflict(error)) setDirty(false);
        else setRefused(serverProblems(error, [], () => keys));
      }}
    >
      <h2 id="segment-conditions-title">Conditions</h2>
      <p className="help">
        A context is in this segment when one of its actors is a listed member, or when all of these conditions hold for
        its attributes. The member count and the member list count listed members only. Segments are project-wide: the
        same in every environment.
      </p>
      <AttributeSuggestions />
      <ConditionsEditor
        conditions={conditions}
        onChange={(next) => {
          if (!dirty) basis.current = props.etag();
          setDirty(true);
          setConditions(next);
        }}
        allowSegments={false}
        segments={undefined}
        problems={problems}
        disabled={!canWrite}
        owner="the segment"
      />
      <ProblemList problems={problems.filter((p) => p.condition === undefined)} />
      {refused.length === 0 && <ErrorText error={action.error} />}
      <SaveRow
        label="Save conditions"
        reasonId="segment-conditions-reason"
        reason={reason}
        reasonIsError={client.length > 0}
        busy={action.busy}
        dirty={dirty}
        onDiscard={() => {
          action.clear();
          setRefused([]);
          setDirty(false);
        }}
      />
    </form>
  );
}

// ---- Evaluate: attributes ----

export interface AttributeRow {
  key: number;
  name: string;
  value: string;
}

export const newAttributeRow = (): AttributeRow => ({ key: newKey(), name: "", value: "" });

/**
 * The attributes of the Evaluate panel's rows: a value with a comma is a list (`beta, staff` → ["beta",
 * "staff"], each trimmed); any other value is one string. Rows without a name are left out.
 */
export function parseAttributes(rows: readonly AttributeRow[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const r of rows) {
    const name = r.name.trim();
    if (name === "") continue;
    out[name] = r.value.includes(",")
      ? r.value
          .split(",")
          .map((v) => v.trim())
          .filter((v) => v !== "")
      : r.value.trim();
  }
  return out;
}

export function AttributesEditor(props: { rows: AttributeRow[]; onChange: (rows: AttributeRow[]) => void }) {
  const set = (key: number, patch: Partial<AttributeRow>) =>
    props.onChange(props.rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  return (
    <fieldset className="attributes">
      <legend>Attributes</legend>
      {props.rows.map((r, i) => (
        <div key={r.key} className="row attribute-row" data-testid="attribute-row">
          <div className="field">
            <label htmlFor={`attr-${r.key}-name`}>Attribute {i + 1} name</label>
            <input
              id={`attr-${r.key}-name`}
              value={r.name}
              list="attribute-suggestions"
              placeholder="country"
              onChange={(e) => set(r.key, { name: e.target.value })}
            />
          </div>
          <div className="field">
            <label htmlFor={`attr-${r.key}-value`}>Attribute {i + 1} value</label>
            <input
              id={`attr-${r.key}-value`}
              value={r.value}
              placeholder="DE"
              aria-describedby="attributes-help"
              onChange={(e) => set(r.key, { value: e.target.value })}
            />
          </div>
          <button
            type="button"
            aria-label={`Remove attribute ${i + 1}${r.name ? ` (${r.name})` : ""}`}
            onClick={() => props.onChange(props.rows.filter((x) => x.key !== r.key))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => props.onChange([...props.rows, newAttributeRow()])}>
        Add attribute
      </button>
      <span id="attributes-help" className="help">
        A value with commas is a list (<code>beta, staff</code> is two values); numbers and dates are read by the rule
        that compares them.
      </span>
    </fieldset>
  );
}

/**
 * A form's Save button, disabled with its reason shown beneath it (and named as its description), and
 * Discard while there are changes: the targeting form's and the segment conditions' alike.
 */
function SaveRow(props: {
  label: string;
  reasonId: string;
  reason: string | undefined;
  /** The reason is a problem to fix (red), not a state such as "No changes to save." */
  reasonIsError: boolean;
  busy: boolean;
  dirty: boolean;
  onDiscard: () => void;
}) {
  return (
    <>
      <div className="row">
        <button
          type="submit"
          className="primary"
          disabled={props.reason !== undefined || props.busy}
          aria-describedby={props.reason ? props.reasonId : undefined}
        >
          {props.label}
        </button>
        {props.dirty && (
          <button type="button" onClick={props.onDiscard}>
            Discard changes
          </button>
        )}
      </div>
      {props.reason && (
        <p id={props.reasonId} className={props.reasonIsError ? "error" : "help"} data-testid="save-reason">
          {props.reason}
        </p>
      )}
    </>
  );
}
