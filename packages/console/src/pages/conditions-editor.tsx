// A list of conditions (a rule's, a segment's): each an attribute, an operator (the contract's
// CONDITION_OPERATORS) and its values (chips, a segment picker, or none), with the problems found at each.
import {
  ATTRIBUTE_NAME_MAX_LENGTH,
  CONDITION_OPERATORS,
  CONDITIONS_MAX,
  type ConditionOperator,
  type Segment,
} from "@flagstaff/sdk";
import {
  type ConditionDraft,
  KIND,
  type Kind,
  newCondition,
  OPERATOR_LABELS,
  VALUES_HELP,
} from "./targeting-drafts.js";
import { type Placed, ProblemList } from "./targeting-problems.js";

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
              maxLength={ATTRIBUTE_NAME_MAX_LENGTH}
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
        disabled={props.disabled || props.conditions.length >= CONDITIONS_MAX}
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
