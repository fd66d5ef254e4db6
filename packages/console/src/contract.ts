// The contract's identifier rules as the console's inputs check them (`pattern`, beside `maxLength`): the
// very patterns the server validates with (@flagstaff/core, re-exported by the SDK), made fit for HTML.
import { ENVIRONMENT_ID_PATTERN, FLAG_NAME_PATTERN, TARGETING_KEY_PATTERN } from "@flagstaff/sdk";

/**
 * A contract pattern (JSON Schema's, read with the `u` flag) as an input's `pattern` attribute, which the
 * browser compiles with the `v` flag: there a `-` that stands for itself in a character class (first or
 * last in it) must be escaped. The anchors may stay: the browser wraps the pattern in `^(?:…)$`.
 */
export function inputPattern(pattern: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      out += c + (pattern[i + 1] ?? "");
      i++;
      continue;
    }
    if (!inClass && c === "[") {
      inClass = true;
      out += c;
      if (pattern[i + 1] === "^") out += pattern[++i];
      if (pattern[i + 1] === "-") {
        out += "\\-";
        i++;
      }
      continue;
    }
    if (inClass && c === "]") inClass = false;
    else if (inClass && c === "-" && pattern[i + 1] === "]") {
      out += "\\-";
      continue;
    }
    out += c;
  }
  return out;
}

/** A flag's name, an environment's id, a variant's key or a rule's id, as inputs check them. */
export const FLAG_NAME_INPUT = inputPattern(FLAG_NAME_PATTERN);
export const ENVIRONMENT_ID_INPUT = inputPattern(ENVIRONMENT_ID_PATTERN);
export const TARGETING_KEY_INPUT = inputPattern(TARGETING_KEY_PATTERN);

/**
 * Rows a list page reads at once (the API's default page size), and the most the API serves in one page
 * (its `limit` is 1–100): what the pickers and whole lists read in. The API's page limits are not in the
 * contract of @flagstaff/core yet (the server's PageQuerySchema writes 100), so the console's one home
 * for them is here.
 */
export const PAGE_SIZE = 20;
export const PAGE_MAX = 100;
