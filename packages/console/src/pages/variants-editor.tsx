// A flag's variants (issue 25): the editor of its rows (key, value, description), the create form's type,
// variants and on/off variants (NewFlagTargeting), and the Variants tab of a flag's page.
import {
  DESCRIPTION_MAX_LENGTH,
  FLAG_TYPES,
  type Flag,
  type FlagType,
  TARGETING_KEY_MAX_LENGTH,
  VARIANTS_MAX,
  VARIANTS_MIN,
  validateConfiguration,
} from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import { TARGETING_KEY_INPUT } from "../contract.js";
import { useApp } from "../ui.js";
import { Unsaved } from "./flag-fields.js";
import { usePendingPart } from "./flag-pending.js";
import { newKey, type Variant } from "./targeting-drafts.js";
import { localMessage, type Placed, placedOf, ProblemList } from "./targeting-problems.js";

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
                  maxLength={TARGETING_KEY_MAX_LENGTH}
                  pattern={TARGETING_KEY_INPUT}
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
                  maxLength={DESCRIPTION_MAX_LENGTH}
                  disabled={props.disabled}
                  onChange={(e) => set(r.key, { description: e.target.value })}
                />
              </div>
              <button
                type="button"
                className="variant-remove"
                disabled={props.disabled || props.rows.length <= VARIANTS_MIN}
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
        {VARIANTS_MIN}–{VARIANTS_MAX} variants; each key 1–{TARGETING_KEY_MAX_LENGTH} letters, digits and{" "}
        <code>. _ -</code>. Values: {valueHelp.toLowerCase()}
      </p>
      <button
        type="button"
        disabled={props.disabled || props.rows.length >= VARIANTS_MAX}
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

/** The contract's flag types (FLAG_TYPES) as the create form offers them. */
const TYPE_WORDS: Record<FlagType, string> = {
  boolean: "boolean (on / off)",
  string: "string",
  number: "number",
  object: "object (JSON)",
};

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
          {FLAG_TYPES.map((t) => (
            <option key={t} value={t}>
              {TYPE_WORDS[t]}
            </option>
          ))}
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
