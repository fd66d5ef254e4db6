import { writeFile } from "node:fs/promises";
import { extname } from "node:path";
import { stringify } from "yaml";
import type { Noun } from "../command.js";

/** A document as text: YAML for .yaml and .yml files (and the terminal), JSON for .json (and --json). */
export function documentText(document: unknown, format: "yaml" | "json"): string {
  return format === "json" ? `${JSON.stringify(document, null, 2)}\n` : stringify(document, { lineWidth: 0 });
}

/** The format a file's extension asks for; undefined for another extension. */
export function formatOf(path: string): "yaml" | "json" | undefined {
  const extension = extname(path).toLowerCase();
  return extension === ".yaml" || extension === ".yml" ? "yaml" : extension === ".json" ? "json" : undefined;
}

export const exportNoun: Noun = {
  name: "export",
  summary: "Export the whole project as one document (flags as code): YAML or JSON, to a file or the terminal",
  command: {
    summary:
      "Write the project's environments, segments and flags with every configuration to a file (-o flags.yaml) or print it",
    options: {
      output: {
        type: "string",
        short: "o",
        value: "<file>",
        description:
          "Write to this file: YAML for .yaml/.yml, JSON for .json (default: print YAML, or JSON with --json)",
      },
      members: { type: "boolean", description: "Each segment's listed members too" },
    },
    async run(ctx) {
      const { value: document, etag } = await ctx
        .client()
        .projects.export(ctx.project(), { members: ctx.boolean("members") });
      const output = ctx.string("output");
      if (output === undefined) {
        ctx.print(document, (d) => documentText(d, "yaml").trimEnd());
        return;
      }
      const format = formatOf(output);
      if (format === undefined) throw ctx.usage(`--output must end in .yaml, .yml or .json, got "${output}".`);
      await writeFile(output, documentText(document, format));
      ctx.done(
        `Wrote project ${document.project.id} (${document.flags.length} flags, ${document.segments.length} segments, ${document.environments.length} environments) to ${output} at revision ${etag}.`,
      );
    },
  },
};
