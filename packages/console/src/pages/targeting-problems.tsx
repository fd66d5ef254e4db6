// The problems of a targeting form, the validator's (core's, through the SDK) and the server's, placed at
// the rule and condition at fault.
import { type ConfigurationProblem, isFlagstaffError } from "@flagstaff/sdk";

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
export function serverProblems(
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

export function ProblemList(props: { problems: readonly Placed[]; testId?: string }) {
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

export const placedOf = (p: ConfigurationProblem): Placed => ({
  section: parsePath(p.path).section,
  path: p.path,
  message: p.message,
  server: false,
});
