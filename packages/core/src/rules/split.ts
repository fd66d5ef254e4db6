import { crc32Utf8 } from "./bucketing.js";
import { SPLIT_BUCKETS } from "../contract/limits.js";
import type { Split } from "./types.js";
import { thousandths } from "./validate.js";

/**
 * A split's bucket, 0 to 99,999, for the value it buckets on: crc32 (as the actor rollout's) of the UTF-8
 * of "<flag name>:<rule id>:<value>", modulo 100,000. The flag name and rule id in the salt make each
 * rule's split independent of the actor rollout and of the flag's other rules; an actor keeps its bucket,
 * so its variant, for as long as the flag's name, the rule's id and the weights stay the same.
 */
export function splitBucket(flagName: string, ruleId: string, value: string): number {
  return crc32Utf8(`${flagName}:${ruleId}:${value}`) % SPLIT_BUCKETS;
}

/**
 * What a split buckets on, as text: the `bucketBy` attribute when it is a string or a safe integer (as
 * its decimal digits), by default the context's first actor id. Undefined when there is none: the rule
 * then does not decide, and evaluation goes on to the next rule (as GrowthBook skips an experiment whose
 * hash attribute is missing).
 */
export function bucketingValue(
  bucketBy: string | undefined,
  attributes: Readonly<Record<string, unknown>> | undefined,
  actorIds: readonly string[],
): string | undefined {
  if (bucketBy === undefined) return actorIds[0];
  const value = attributes !== undefined && Object.hasOwn(attributes, bucketBy) ? attributes[bucketBy] : undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/**
 * The upper bounds of each weight's buckets, in order: weight i takes the buckets from bound i - 1 (0 for
 * the first) up to bound i. A weight of 0 takes none. Raising one weight (and lowering a later one) moves
 * only the actors between the old and the new bound.
 */
export function splitBounds(split: Split): Int32Array {
  const bounds = new Int32Array(split.weights.length);
  let total = 0;
  split.weights.forEach((w, i) => {
    total += thousandths(w.weight);
    bounds[i] = total;
  });
  return bounds;
}

/** The index of the weight a bucket falls in. */
export function weightIndex(bounds: Int32Array, bucket: number): number {
  for (let i = 0; i < bounds.length; i++) if (bucket < (bounds[i] as number)) return i;
  return bounds.length - 1;
}
