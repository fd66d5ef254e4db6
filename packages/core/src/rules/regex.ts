import { RE2JS } from "re2js";

// The `matches` operator's regular expressions: RE2 syntax and linear-time matching, so no pattern can
// make an evaluation hang (JavaScript's RegExp backtracks: /(a+)+$/ on "aaaa…!" takes exponential time).
// re2js is a pure JavaScript port of RE2/J: it runs in browsers as in Node.js, with no native code.

/** A compiled pattern: whether it finds a match anywhere in the text (unanchored, as RE2's PartialMatch). */
export type Pattern = (text: string) => boolean;

/** Patterns compiled so far, by case flag and source; starts over when full (compiling is the slow part). */
const cache = new Map<string, Pattern | string>();
const CACHE_SIZE = 1000;

/**
 * Compiles a pattern once: answers its matcher, or the reason RE2 refuses it (a syntax error, or a Perl
 * feature RE2 leaves out because it cannot run in linear time: backreferences, lookarounds).
 */
export function compilePattern(source: string, caseInsensitive: boolean): Pattern | string {
  const key = `${caseInsensitive ? "i" : "s"}${source}`;
  let compiled = cache.get(key);
  if (compiled === undefined) {
    try {
      const re = RE2JS.compile(source, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
      compiled = (text: string) => re.test(text);
    } catch (error) {
      compiled = error instanceof Error ? error.message : String(error);
    }
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(key, compiled);
  }
  return compiled;
}
