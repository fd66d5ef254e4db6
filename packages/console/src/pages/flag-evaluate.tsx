// The flag page's Evaluate tab: what the flag serves a given context, and why (the explain route), and the
// snippets that check it from code, each with the call that fits the flag's type.
import type { Flag, FlagExplanation, FlagType } from "@flagstaff/sdk";
import { useState } from "react";
import { baseUrl } from "../api/session.js";
import { CopyButton, ErrorText, enc, useAction, useApp } from "../ui.js";
import { parseIds } from "../format.js";
import { type AttributeRow, AttributesEditor, newAttributeRow, parseAttributes } from "./attributes-editor.js";

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

export function EvaluatePanel(props: { flag: Flag }) {
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

export function Snippets(props: { flag: Flag }) {
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
