// A flag's prerequisites in the Targeting tab: other flags, each with the variants it must serve.
import { type Flag, PREREQUISITES_MAX } from "@flagstaff/sdk";
import { ErrorText, useApp, useData } from "../ui.js";
import { allPages } from "../lists.js";
import { newKey, type PrerequisiteDraft } from "./targeting-drafts.js";
import { type Placed, ProblemList } from "./targeting-problems.js";

// ---- Prerequisites ----

export function PrerequisitesEditor(props: {
  flag: Flag;
  drafts: PrerequisiteDraft[];
  onChange: (drafts: PrerequisiteDraft[]) => void;
  problems: readonly Placed[];
  disabled: boolean;
}) {
  const { conn, project } = useApp();
  const flags = useData(() => allPages((page) => conn.client.flags.list(project).page(page), 10), [project], 0);
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
        disabled={props.disabled || props.drafts.length >= PREREQUISITES_MAX || flags.data === undefined}
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
