import type { Resolution } from "@flagstaff/core";
import { ofrepResult } from "@flagstaff/core/schemas";

/**
 * The JSON of an answer without its flag's key (`"value":…,"reason":…,"variant":…,"metadata":{}}`), by
 * answer. Core's resolutionOf answers one shared object per compiled answer, so this is made once per
 * answer and reused until the flag's configuration changes (which compiles new answers).
 */
const answerJson = new WeakMap<Resolution, string>();

/**
 * One flag's OFREP result as JSON: the bytes the schema's serializer wrote (the same properties in the
 * same order, ofrepResult's), with the answer's part reused.
 */
export function ofrepResultJson(key: string, resolution: Resolution): string {
  if (resolution.reason === "ERROR") return JSON.stringify(ofrepResult(key, resolution));
  let answer = answerJson.get(resolution);
  if (answer === undefined) {
    const { key: _key, ...rest } = ofrepResult("", resolution);
    answer = JSON.stringify(rest).slice(1);
    answerJson.set(resolution, answer);
  }
  return `{"key":${JSON.stringify(key)},${answer}`;
}

/**
 * An OFREP bulk answer's body, written here rather than by Fastify's serializer: a project of 10,000 flags
 * answers about 840 KiB to each client after every change, and what each flag answers is mostly the same
 * from one request to the next (ofrepResultJson). `rest`: the properties after `flags` (eventStreams).
 */
export function bulkBody(results: readonly string[], rest?: Record<string, unknown>): string {
  const after = rest === undefined ? "" : `,${JSON.stringify(rest).slice(1, -1)}`;
  return `{"flags":[${results.join(",")}]${after}}`;
}
