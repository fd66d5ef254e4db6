// The Evaluate tab's context attributes: rows of a name and a value (a value with commas is a list).
import { newKey } from "./targeting-drafts.js";

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
