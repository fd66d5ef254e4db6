import type { FlagstaffEvent } from "@flagstaff/sdk";
import type { Noun } from "../command.js";
import { firstItems, limitOf, limitOption } from "../lists.js";
import { type Column, table } from "../output.js";

/** Who made a change: a person by name (and e-mail), a key by name, or the service in parentheses. */
const who = (e: FlagstaffEvent): string => {
  const actor = e.actor;
  if (actor.type === "user") return `${actor.name} <${actor.email}>`;
  if (actor.type === "system") return `(${actor.system})`;
  return actor.keyName;
};

/** An item of a listed field, in a word: an id as it is; a variant by key, a rule by id, a prerequisite by flag, a condition by attribute and operator. */
function label(item: unknown): string {
  if (typeof item !== "object" || item === null) return String(item);
  const o = item as Record<string, unknown>;
  for (const name of ["key", "id", "flag"]) if (typeof o[name] === "string") return o[name] as string;
  if (typeof o.operator === "string") return `${typeof o.attribute === "string" ? `${o.attribute} ` : ""}${o.operator}`;
  return JSON.stringify(item);
}

/** A value in a few words: a list as its items' labels, anything else as JSON. */
const brief = (value: unknown): string =>
  Array.isArray(value) ? `[${value.map(label).join(",")}]` : (JSON.stringify(value) ?? "null");

/**
 * What changed, in a few words: the fields whose values differ (lists such as variants and rules by their
 * items' keys and ids), and the ids added or removed.
 */
function summary(e: FlagstaffEvent): string {
  const before = e.before ?? {};
  const after = e.after ?? {};
  const parts: string[] = [];
  for (const [field, value] of Object.entries(after)) {
    const compared = e.before !== null && field in before;
    if (Array.isArray(value) && !compared) {
      if (value.length > 0) parts.push(`${field} ${value.map(label).join(",")}`);
    } else if (e.before !== null && JSON.stringify(before[field]) !== JSON.stringify(value)) {
      parts.push(`${field} ${brief(before[field])}→${brief(value)}`);
    }
  }
  if (e.comment !== undefined) parts.push(`comment ${JSON.stringify(e.comment)}`);
  return parts.join("; ");
}

const COLUMNS: Column<FlagstaffEvent>[] = [
  ["TIME", (e) => e.createdAt],
  ["TYPE", (e) => e.type],
  ["TARGET", (e) => e.target.name],
  ["ENVIRONMENT", (e) => e.environment ?? ""],
  ["BY", who],
  ["CHANGES", summary],
];

export const events: Noun = {
  name: "events",
  summary: "The project's history: who changed what, when, and from what (read key); newest first",
  command: {
    summary: "List the project's events, newest first",
    options: {
      environment: {
        type: "string",
        value: "<id>",
        description:
          "Only events of this environment (project-wide ones left out); FLAGSTAFF_ENVIRONMENT does not apply",
      },
      type: {
        type: "string",
        multiple: true,
        value: "<type>",
        description: "An event type such as flag.updated, or a prefix such as flag. (repeatable)",
      },
      flag: { type: "string", value: "<name>", description: "Only events of flags of this name" },
      segment: { type: "string", value: "<id>", description: "Only events of this segment" },
      since: { type: "string", value: "<time>", description: "Only events at or after this ISO time" },
      until: { type: "string", value: "<time>", description: "Only events before this ISO time" },
      limit: limitOption("events"),
    },
    async run(ctx) {
      const count = limitOf(ctx);
      const rows = await firstItems(count, (limit) =>
        ctx.client().events.list(ctx.project(), {
          type: ctx.strings("type"),
          flag: ctx.string("flag"),
          segment: ctx.string("segment"),
          since: ctx.string("since"),
          until: ctx.string("until"),
          // The option only, not FLAGSTAFF_ENVIRONMENT: this filter also hides project-wide events (segments,
          // keys), which a variable set for the flag commands should not do silently.
          environment: ctx.string("environment"),
          limit,
        }),
      );
      ctx.print(rows, (data) => table(data, COLUMNS, "No events."));
    },
  },
};
