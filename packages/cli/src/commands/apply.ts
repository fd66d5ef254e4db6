import { readFile } from "node:fs/promises";
import type { ApplyResult, PlanChange, PlanField, ProjectDocument } from "@flagstaff/sdk";
import { parse } from "yaml";
import type { Context, Noun } from "../command.js";
import { EXIT } from "../errors.js";

// Flags as code (docs/flags-as-code.md): `flagstaff diff -f flags.yaml` prints the plan that would take
// the project to the file (exit code 2 when there is one), `flagstaff apply -f flags.yaml` makes it.

/** The document a file holds: YAML (JSON is YAML too), read as it is; the server judges it. */
async function readDocument(ctx: Context): Promise<ProjectDocument> {
  const path = ctx.required("file");
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw ctx.usage(`--file: cannot read ${path} (${error instanceof Error ? error.message : String(error)}).`);
  }
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw ctx.usage(`--file ${path} is not YAML or JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw ctx.usage(`--file ${path} does not hold a project's document (an object; see "flagstaff export").`);
  }
  return document as ProjectDocument;
}

const MAX_VALUE = 200;

/**
 * How long diff and apply wait by default (without --timeout): a document of thousands of flags is planned
 * and applied in one write that may take a minute; a client that gave up would not see it commit.
 */
export const APPLY_TIMEOUT_MS = 600_000;

/** A value as the plan prints it: JSON, shortened past MAX_VALUE characters. */
function shown(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

function fieldLine(field: PlanField, action: PlanChange["action"]): string {
  if (field.added !== undefined || field.removed !== undefined) {
    const ids = [...(field.added ?? []).map((id) => `+${id}`), ...(field.removed ?? []).map((id) => `-${id}`)];
    return `${field.field}: ${ids.join(" ")}`;
  }
  if (action === "create") return `${field.field}: ${shown(field.after)}`;
  return `${field.field}: ${shown(field.before)} → ${shown(field.after)}`;
}

const SIGN: Record<PlanChange["action"], string> = { create: "+", update: "~", delete: "-" };

function heading(change: PlanChange): string {
  const what =
    change.object === "configuration" ? `flag ${change.id} in ${change.environment}` : `${change.object} ${change.id}`;
  return `${SIGN[change.action]} ${change.action} ${what}${change.changeRequest ? " (by change request: approvals required)" : ""}`;
}

/** The plan as a reviewer reads it: one block per object, one line per field, then the counts. */
export function planText(result: ApplyResult, project: string): string {
  if (result.changes.length === 0)
    return `No changes: project ${project} is as the document says (revision r${result.baseRevision}).`;
  const lines = [`Plan for project ${project} at revision r${result.baseRevision}:`];
  for (const change of result.changes) {
    lines.push(`  ${heading(change)}`);
    for (const field of change.fields) lines.push(`      ${fieldLine(field, change.action)}`);
  }
  const count = (action: PlanChange["action"]) => result.changes.filter((c) => c.action === action).length;
  lines.push(`${count("create")} to create, ${count("update")} to update, ${count("delete")} to delete.`);
  return lines.join("\n");
}

const FILE = {
  file: {
    type: "string",
    short: "f",
    value: "<file>",
    required: true,
    description: "The project's document: YAML or JSON (as flagstaff export writes it)",
  },
  prune: { type: "boolean", description: "Delete the flags and segments the document lacks (default: keep them)" },
  "if-match": {
    type: "string",
    value: "<revision>",
    description: 'Only if the project is still at this revision (export\'s, e.g. "r12"): else 412, nothing changed',
  },
} as const;

const ifMatchOf = (ctx: Context) => {
  const revision = ctx.string("if-match");
  if (revision === undefined) return {};
  return { ifMatch: revision.startsWith('"') ? revision : `"${revision}"` };
};

export const diffNoun: Noun = {
  name: "diff",
  summary: "Show what applying a document would change (flags as code); exit code 2 when it would change something",
  command: {
    summary:
      "Print the plan that takes the project to the document, changing nothing: exit code 0 when there is nothing to do, 2 when there is",
    options: FILE,
    async run(ctx) {
      const document = await readDocument(ctx);
      const project = ctx.project();
      const result = await ctx
        .patientClient(APPLY_TIMEOUT_MS)
        .projects.apply(project, document, { dryRun: true, prune: ctx.boolean("prune"), ...ifMatchOf(ctx) });
      ctx.print(result, (r) => planText(r, project));
      return result.changes.length > 0 ? EXIT.changes : EXIT.ok;
    },
  },
};

export const applyNoun: Noun = {
  name: "apply",
  summary: "Take the project to a document (flags as code): its plan in one write",
  command: {
    summary:
      "Make the plan that takes the project to the document, in one write (--dry-run: print it only); environments that require approvals get a change request",
    options: {
      ...FILE,
      "dry-run": {
        type: "boolean",
        description: "Print the plan only; change nothing (as flagstaff diff, exit code 0)",
      },
    },
    async run(ctx) {
      const document = await readDocument(ctx);
      const project = ctx.project();
      const result = await ctx.patientClient(APPLY_TIMEOUT_MS).projects.apply(project, document, {
        dryRun: ctx.boolean("dry-run"),
        prune: ctx.boolean("prune"),
        ...ifMatchOf(ctx),
      });
      ctx.print(result, (r) => {
        const lines = [planText(r, project)];
        if (r.dryRun) lines.push("Dry run: nothing was changed.");
        else if (r.changes.length > 0) lines.push(`Applied: project ${project} is at revision r${r.revision}.`);
        const console = ctx.serverUrl().replace(/\/+$/, "");
        for (const request of r.changeRequests) {
          lines.push(
            `Change request ${request.id} opened for ${request.environment} (its changes wait for approval): ${console}/console/p/${encodeURIComponent(project)}/changes/${encodeURIComponent(request.id)}`,
          );
        }
        return lines.join("\n");
      });
    },
  },
};
