// Shared words: an API problem as plain sentences (placed at the field it names), times, pasted ids.
import { FlagstaffError, isFlagstaffError } from "@flagstaff/sdk";

/** A write refused because the flag or segment changed since it was read (412 precondition_failed). */
export function isConflict(error: unknown): boolean {
  return isFlagstaffError(error) && error.code === "precondition_failed";
}

export function errorText(error: unknown, shownFields: readonly string[] = []): string {
  if (isConflict(error)) {
    return "Not applied: this was changed elsewhere meanwhile. The page now shows the latest version; review it and try again.";
  }
  if (isFlagstaffError(error)) {
    // A validation problem: one plain sentence per field (from `errors`), not the detail that repeats them;
    // fields a form shows next to their input are left out here.
    if (error.errors.length > 0) {
      return error.errors
        .filter((e) => !shownFields.includes(fieldOf(e.path)))
        .map((e) => fieldSentence(e.path, e.message))
        .join(" ");
    }
    return error.detail;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The field a problem's error path names: its last part that is not an index (`/params/flagName` → flagName). */
export function fieldOf(path: string): string {
  return (
    path
      .split("/")
      .filter((part) => part !== "" && !/^\d+$/.test(part))
      .pop() ?? ""
  );
}

/** How the console calls a field the API names. */
const FIELD_LABELS: Record<string, string> = {
  flagName: "Name",
  name: "Name",
  description: "Description",
  percentageActors: "The percentage of actors",
  percentageCalls: "The percentage of calls",
  status: "The status",
  addActors: "An actor id",
  removeActors: "An actor id",
  addSegments: "A segment",
  removeSegments: "A segment",
  email: "The e-mail",
  password: "The password",
};

/** A validator's rule in plain words: "must NOT have more than 1024 characters" → "must be at most 1,024 characters". */
export function plainRule(message: string): string {
  const more = /^must NOT have more than (\d+) (characters|items)$/.exec(message);
  if (more) return `must be at most ${Number(more[1]).toLocaleString()} ${more[2] === "items" ? "ids" : "characters"}`;
  const fewer = /^must NOT have fewer than (\d+) (characters|items)$/.exec(message);
  if (fewer) return fewer[1] === "1" ? "cannot be empty" : `must be at least ${fewer[1]} ${fewer[2]}`;
  if (/^must match pattern /.test(message)) return "has characters that are not allowed";
  return message;
}

/** One plain sentence for one field error: "Name must be 1–128 characters of …". */
export function fieldSentence(path: string, message: string, label?: string): string {
  const field = fieldOf(path);
  const name = label ?? FIELD_LABELS[field] ?? (field ? `The field ${field}` : "The request");
  const sentence = `${name} ${plainRule(message)}`;
  return sentence.endsWith(".") ? sentence : `${sentence}.`;
}

/** The plain sentence for `field` in a validation problem, to show next to its input; undefined when none. */
export function fieldError(error: unknown, field: string, label?: string): string | undefined {
  if (!isFlagstaffError(error)) return undefined;
  const found = error.errors.find((e) => fieldOf(e.path) === field);
  return found && fieldSentence(found.path, found.message, label);
}

/**
 * A refusal that names no field (409 user_exists) placed at the field it is about, so that the form shows
 * it under that input like a validation error: `places` maps a code to a field's path and a rule.
 */
export function atField(error: unknown, places: Record<string, [path: string, message: string]>): unknown {
  if (!isFlagstaffError(error)) return error;
  const place = places[error.code];
  if (!place) return error;
  return new FlagstaffError({
    status: error.status,
    code: error.code,
    detail: error.detail,
    problem: error.problem,
    errors: [{ path: place[0], message: place[1] }],
  });
}

export function ago(iso: string | null, now = Date.now()): string {
  if (iso === null) return "never";
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 45) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return `${days} day${days === 1 ? "" : "s"} ago`;
}

export function when(iso: string | null): string {
  return iso === null ? "—" : new Date(iso).toLocaleString();
}

/** Actor ids pasted as lines, commas, tabs or spaces. */
export function parseIds(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,;]+/)
        .map((s) => s.trim())
        .filter((s) => s !== ""),
    ),
  ];
}

export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
