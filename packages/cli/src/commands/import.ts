import { readFile } from "node:fs/promises";
import { fromFlagd } from "@flagstaff/core/flagd";
import type { ProjectDocument } from "@flagstaff/sdk";
import type { Noun } from "../command.js";
import { APPLY_TIMEOUT_MS, planText } from "./apply.js";

// `flagstaff import --flagd flags.json` (docs/flagd.md, "Import"): flagd's flag definitions made into the
// project's flags, through the project's document: the imported flags' definitions and their configuration
// in one environment replace (or join) the document's, which is then applied (no prune).

type DocumentFlag = ProjectDocument["flags"][number];

/** The document with the imported flags and segments: each flag's definition replaced, its configuration in `environment` too. */
export function withImported(
  document: ProjectDocument,
  imported: ReturnType<typeof fromFlagd>,
  environment: string,
): ProjectDocument {
  const flags = new Map(document.flags.map((f) => [f.name, f]));
  for (const flag of imported.flags) {
    const existing = flags.get(flag.name);
    const entry: DocumentFlag = {
      name: flag.name,
      description: existing?.description ?? "Imported from flagd",
      type: flag.type,
      variants: flag.variants as DocumentFlag["variants"],
      kind: existing?.kind ?? "release",
      permanent: existing?.permanent ?? false,
      environments: { ...(existing?.environments ?? {}), [environment]: flag.configuration },
    };
    flags.set(flag.name, entry);
  }
  const segments = new Map(document.segments.map((s) => [s.id, s]));
  for (const segment of imported.segments) segments.set(segment.id, segment);
  return { ...document, segments: [...segments.values()], flags: [...flags.values()] };
}

export const importNoun: Noun = {
  name: "import",
  summary: "Create or update the project's flags from flagd flag definitions",
  command: {
    summary:
      "Make flagd's flag definitions (state, variants, defaultVariant, targeting of if chains, comparisons, fractional splits, targeting-key lists) the project's flags in one environment, in one write (--dry-run: print the plan only)",
    options: {
      flagd: {
        type: "string",
        value: "<file>",
        required: true,
        description: "A flagd flag-definition file (JSON)",
      },
      "dry-run": { type: "boolean", description: "Print the plan only; change nothing" },
    },
    async run(ctx) {
      const path = ctx.required("flagd");
      let file: unknown;
      try {
        file = JSON.parse(await readFile(path, "utf8"));
      } catch (error) {
        throw ctx.usage(
          `--flagd: cannot read ${path} as JSON (${error instanceof Error ? error.message : String(error)}).`,
        );
      }
      const project = ctx.project();
      const client = ctx.patientClient(APPLY_TIMEOUT_MS);
      const { value: document, etag } = await client.projects.export(project);
      const environment = ctx.environment() ?? document.environments.find((e) => e.default)?.id;
      if (environment === undefined || !document.environments.some((e) => e.id === environment)) {
        throw ctx.usage(`Project ${project} has no environment "${environment}".`);
      }
      const imported = fromFlagd(file, { segmentPrefix: `${project}.flagd` });
      if (imported.problems.length > 0) {
        throw ctx.usage(
          [`${path} cannot be imported (nothing was changed):`, ...imported.problems.map((p) => `  ${p}`)].join("\n"),
        );
      }
      const result = await client.projects.apply(project, withImported(document, imported, environment), {
        dryRun: ctx.boolean("dry-run"),
        ...(etag ? { ifMatch: etag } : {}),
      });
      ctx.print({ ...result, notes: imported.notes }, (r) => {
        const lines = [
          `Importing ${imported.flags.length} flags from ${path} into ${environment}.`,
          ...r.notes.map((note) => `Note: ${note}`),
          planText(r, project),
        ];
        if (r.dryRun) lines.push("Dry run: nothing was changed.");
        else if (r.changes.length > 0) lines.push(`Applied: project ${project} is at revision r${r.revision}.`);
        return lines.join("\n");
      });
    },
  },
};
