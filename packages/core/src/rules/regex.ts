import { RE2JS } from "re2js";
import { PATTERN_STATES_MAX, PATTERN_WORK_MAX } from "../contract/limits.js";

// The `matches` operator's regular expressions: RE2 syntax and linear-time matching, so no pattern can
// make an evaluation hang (JavaScript's RegExp backtracks: /(a+)+$/ on "aaaa…!" takes exponential time).
// re2js is a pure JavaScript port of RE2/J: it runs in browsers as in Node.js, with no native code.
//
// Linear is not yet cheap. re2js matches with a lazily built DFA, a few nanoseconds per character, while
// the automaton's states fit its memory; a pattern whose automaton has too many states (bounded
// repetitions after a wildcard: `.{0,1000}.{0,1000}x`, `a[ab]{20}b`, `^.{1,64}@.{1,255}$`) makes it give
// up and fall back to simulating the NFA, 100–200 ns per character and per instruction of the program:
// a third of a second for one such pattern on a 1,000-character value. So where a pattern is written,
// `patternCost` builds its whole automaton once, and the validator refuses it past PATTERN_STATES_MAX: an
// accepted pattern never leaves the DFA. What an evaluation matches is bounded too (MATCHED_CHARACTERS_MAX,
// counted in conditions.ts).

/** A compiled pattern: whether it finds a match anywhere in the text (unanchored, as RE2's PartialMatch). */
export type Pattern = (text: string) => boolean;

/** A compiled pattern, and what it costs once someone asked (`patternCost`). */
interface Entry {
  readonly test: Pattern;
  re: RE2JS;
  cost: PatternCost | undefined;
}

/** Patterns compiled so far, by case flag and source; starts over when full (compiling is the slow part). */
const cache = new Map<string, Entry | string>();
const CACHE_SIZE = 1000;

const flagsOf = (caseInsensitive: boolean) => (caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);

function entry(source: string, caseInsensitive: boolean): Entry | string {
  const key = `${caseInsensitive ? "i" : "s"}${source}`;
  let compiled = cache.get(key);
  if (compiled === undefined) {
    try {
      const re = RE2JS.compile(source, flagsOf(caseInsensitive));
      const made: Entry = { test: (text: string) => made.re.test(text), re, cost: undefined };
      compiled = made;
    } catch (error) {
      compiled = error instanceof Error ? error.message : String(error);
    }
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(key, compiled);
  }
  return compiled;
}

/**
 * Compiles a pattern once: answers its matcher, or the reason RE2 refuses it (a syntax error, or a Perl
 * feature RE2 leaves out because it cannot run in linear time: backreferences, lookarounds).
 */
export function compilePattern(source: string, caseInsensitive: boolean): Pattern | string {
  const compiled = entry(source, caseInsensitive);
  return typeof compiled === "string" ? compiled : compiled.test;
}

/**
 * About how many instructions a pattern compiles to once its bounded repetitions are expanded, read from
 * its text without compiling it: each `x{n,m}` counts x's size m times (nested ones multiply), everything
 * else about one. Compiling expands repetitions, and re2js takes a quarter of a second over
 * `.{0,1000}` or `(abcdefghij){0,100}`, so a pattern over PATTERN_SIZE_MAX is refused before it is.
 * It over-counts rather than under-counts (a `{` that starts no repetition counts as a repetition's).
 */
export function expandedSize(source: string): number {
  // One entry per open group: the sizes of its finished alternatives, of the current one, and of the last
  // atom (what a repetition applies to).
  const groups = [{ done: 0, current: 0, last: 0 }];
  const top = () => groups[groups.length - 1] as { done: number; current: number; last: number };
  const atom = (size: number) => {
    top().current += size;
    top().last = size;
  };
  let i = 0;
  while (i < source.length) {
    const ch = source[i] as string;
    if (ch === "\\") {
      const next = source[i + 1];
      if (next === "Q") {
        const end = source.indexOf("\\E", i + 2);
        const literal = end < 0 ? source.length - i - 2 : end - i - 2;
        for (let k = 0; k < literal; k++) atom(1);
        i = end < 0 ? source.length : end + 2;
        continue;
      }
      const braced = (next === "p" || next === "P" || next === "x") && source[i + 2] === "{";
      i = braced ? Math.max(source.indexOf("}", i), i + 2) + 1 : i + 2;
      atom(1);
      continue;
    }
    if (ch === "[") {
      // A class is one instruction; find its end (a ] first, or after ^, is a member; escapes and [:name:]).
      let j = i + 1;
      if (source[j] === "^") j++;
      if (source[j] === "]") j++;
      while (j < source.length && source[j] !== "]") {
        if (source[j] === "\\") j += 2;
        else if (source[j] === "[" && source[j + 1] === ":") {
          const end = source.indexOf(":]", j + 2);
          j = end < 0 ? j + 1 : end + 2;
        } else j++;
      }
      i = j + 1;
      atom(1);
      continue;
    }
    if (ch === "(") {
      groups.push({ done: 0, current: 0, last: 0 });
      i++;
      continue;
    }
    if (ch === ")") {
      const group = groups.length > 1 ? (groups.pop() as { done: number; current: number }) : undefined;
      i++;
      if (group) atom(group.done + group.current + 1);
      continue;
    }
    if (ch === "|") {
      top().done += top().current + 1;
      top().current = 0;
      top().last = 0;
      i++;
      continue;
    }
    if (ch === "{") {
      const repetition = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 24));
      if (repetition) {
        const least = Number(repetition[1]);
        const most = repetition[3] ? Number(repetition[3]) : least;
        const times = Math.max(least, most, 1);
        const last = top().last;
        top().current += last * (times - 1) + times;
        top().last = last * times + times;
        i += repetition[0].length;
        continue;
      }
    }
    atom(1);
    i++;
  }
  while (groups.length > 1) {
    const group = groups.pop() as { done: number; current: number };
    atom(group.done + group.current + 1);
  }
  return top().done + top().current;
}

/** What a pattern RE2 accepts costs: the states of its automaton, and the work it took to count them. */
export interface PatternCost {
  /**
   * States of its DFA: 0 when re2js matches it without one (a literal, or a one-pass pattern anchored at
   * the start); Infinity past PATTERN_STATES_MAX, past PATTERN_WORK_MAX, or past the DFA's memory.
   */
  readonly states: number;
  /** NFA states visited to build them (each transition visits its state's): bounded by PATTERN_WORK_MAX. */
  readonly work: number;
}

/**
 * The cost of a pattern RE2 accepts (compilePattern answered a matcher), found once per process by
 * building its whole automaton in the matcher's own DFA: in this process its evaluations then find every
 * state ready (elsewhere the DFA builds them as texts reach them, at most that many). Asked where a
 * pattern is written: a configuration already stored is not refused again when loaded.
 */
export function patternCost(source: string, caseInsensitive: boolean): PatternCost {
  const compiled = entry(source, caseInsensitive);
  if (typeof compiled === "string") throw new Error(`not an RE2 pattern: ${compiled}`);
  if (compiled.cost === undefined) {
    compiled.cost = complexity(compiled.re);
    // Refused: compiled again, so the states built to find that out are dropped.
    if (compiled.cost.states === Number.POSITIVE_INFINITY) {
      compiled.re = RE2JS.compile(source, flagsOf(caseInsensitive));
    }
  }
  return compiled.cost;
}

// What `complexity` reads of re2js beyond its documented API: the RE2 object behind an RE2JS (`re2()`),
// whether it matches without a DFA (`prefixComplete`: a literal; `onepass`), and its DFA: `classBounds` and
// `numClasses` (the runes split into classes that every instruction treats alike), `makeState` and `step`.
// These are re2js 2.x's; core's tests pin what `complexity` answers for known patterns, so an upgrade that
// changes them fails there rather than here.
interface DfaState {
  readonly nfaStates: readonly number[];
}
interface Dfa {
  readonly classBounds: Int32Array;
  readonly numClasses: number;
  makeState(pcs: number[], flag: number, ids: number[]): DfaState | null;
  step(state: DfaState, cls: number, rune: number, anchor: number): DfaState | null;
}
interface Re2Internals {
  readonly prefixComplete: boolean;
  readonly onepass: unknown;
  readonly prog: { readonly start: number };
  readonly dfa: Dfa;
}

/** RE2's flags for the start of the text, where `test` starts: EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE. */
const AT_TEXT_START = 4 | 1;
/** The rune re2js's DFA steps on at the end of the text. */
const END_TEXT = -1;
const UNANCHORED = 0;

/** RE2's word characters (\w, and what \b looks at): ASCII letters, digits and underscore. */
const isWordRune = (r: number) => (r >= 48 && r <= 57) || (r >= 65 && r <= 90) || r === 95 || (r >= 97 && r <= 122);

/**
 * Runes that stand for a class [lo, hi] of runes: within a class every instruction matches alike, but the
 * DFA's step also looks at whether a rune is a word character and whether it is a newline, so one of each
 * kind the class holds.
 */
function representatives(lo: number, hi: number): number[] {
  const runes = [lo];
  const firstWord = [48, 65, 95, 97].find((r) => r >= lo && r <= hi && r !== lo);
  if (firstWord !== undefined && !isWordRune(lo)) runes.push(firstWord);
  if (isWordRune(lo)) {
    for (let r = lo + 1; r <= hi && r <= 128; r++) {
      if (!isWordRune(r)) {
        runes.push(r);
        break;
      }
    }
  }
  if (lo < 10 && 10 <= hi) runes.push(10);
  return runes;
}

/**
 * The states of the pattern's DFA as `test` runs it (unanchored, from the start of the text), found by
 * building every one of them in re2js's own DFA, and the work that took. Stops, with states Infinity,
 * past PATTERN_STATES_MAX or PATTERN_WORK_MAX, or when the DFA's memory runs out (where re2js, matching,
 * would fall back to the NFA). The work is counted, not timed, so the same pattern costs the same
 * everywhere.
 */
function complexity(re: RE2JS): PatternCost {
  const re2 = re.re2() as unknown as Re2Internals;
  if (re2.prefixComplete || re2.onepass) return { states: 0, work: 0 };
  const dfa = re2.dfa;
  const bounds = dfa.classBounds;
  const classes: number[][] = [];
  for (let c = 0; c < dfa.numClasses; c++) {
    const lo = c === 0 ? 0 : (bounds[c - 1] as number);
    const hi = c < bounds.length ? (bounds[c] as number) - 1 : 0x10ffff;
    classes.push(representatives(lo, hi));
  }
  const tooLarge = (work: number): PatternCost => ({ states: Number.POSITIVE_INFINITY, work });
  const start = dfa.makeState([re2.prog.start], AT_TEXT_START, []);
  if (start === null) return tooLarge(0);
  const seen = new Set<DfaState>([start]);
  const pending = [start];
  let work = 0;
  while (pending.length > 0) {
    const state = pending.pop() as DfaState;
    for (let c = 0; c <= classes.length; c++) {
      for (const rune of c === classes.length ? [END_TEXT] : (classes[c] as number[])) {
        work += state.nfaStates.length + 1;
        if (work > PATTERN_WORK_MAX) return tooLarge(work);
        const next = dfa.step(state, c, rune, UNANCHORED);
        if (next === null) return tooLarge(work);
        if (seen.has(next)) continue;
        seen.add(next);
        if (seen.size > PATTERN_STATES_MAX) return tooLarge(work);
        // Nothing follows the end of the text.
        if (rune !== END_TEXT) pending.push(next);
      }
    }
  }
  return { states: seen.size, work };
}
