// "Did you mean …?" for a mistyped option, command or subcommand: the closest of the names that exist, when
// one is close enough to be what was meant.

/** Levenshtein distance (insertions, deletions, substitutions), by code unit. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** Two words of a name said alike: equal but for a typo, or one a prefix (3 letters or more) of the other. */
function sameWord(a: string, b: string): boolean {
  if (a.length >= 3 && b.length >= 3 && (a.startsWith(b) || b.startsWith(a))) return true;
  return editDistance(a, b) <= (Math.min(a.length, b.length) >= 5 ? 1 : 0);
}

/** Every word of one name matches a word of the other, both ways, in any order: `percentage-actors` is `actors-percent`. */
function sameWords(typed: string, name: string): boolean {
  const a = typed.split(/[-_]/).filter((w) => w !== "");
  const b = name.split(/[-_]/).filter((w) => w !== "");
  return a.length > 0 && a.every((w) => b.some((v) => sameWord(w, v))) && b.every((v) => a.some((w) => sameWord(w, v)));
}

/**
 * The name among `names` that `typed` most likely meant, or undefined when none is close: the same words
 * in another order or form first (`--percentage-actors` for `--actors-percent`), then the fewest edits,
 * at most a third of the name's length (and at least 2).
 */
export function closest(typed: string, names: readonly string[]): string | undefined {
  const word = typed.toLowerCase();
  const byWords = names.filter((name) => sameWords(word, name.toLowerCase()));
  if (byWords.length > 0) {
    return byWords.reduce((best, name) => (editDistance(word, name) < editDistance(word, best) ? name : best));
  }
  let best: string | undefined;
  let distance = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const d = editDistance(word, name.toLowerCase());
    if (d < distance && d <= Math.max(2, Math.floor(name.length / 3))) {
      best = name;
      distance = d;
    }
  }
  return best;
}
