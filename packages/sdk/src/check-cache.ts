import type { CheckResult } from "./types.js";

interface Entry {
  answer: CheckResult;
  expiresAt: number;
}

/** An in-memory cache of check answers, keyed by project, flag, environment, the sorted set of actor ids and the attributes. */
export class CheckCache {
  private readonly entries = new Map<string, Entry>();

  /** Creates a cache holding at most `maxEntries` answers (the oldest go first). */
  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The key of a check: the order and repetition of actor ids do not change the answer, so neither the key;
   * nor the order of attribute names (`attributes` is the query's list of [name, value] pairs, a value
   * being a text or a list of texts: `"a"` and `["a"]` are different attributes, and so different keys).
   */
  static key(
    projectId: string,
    flagName: string,
    actorIds: readonly string[] | undefined,
    attributes: readonly (readonly [string, string | readonly string[]])[] = [],
    environment?: string,
  ): string {
    const ids = [...new Set(actorIds ?? [])].sort();
    const sorted = [...attributes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return JSON.stringify([projectId, flagName, ids, sorted, environment ?? null]);
  }

  /** The cached answer, or undefined when there is none or it has expired. */
  get(key: string): CheckResult | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.answer;
  }

  /** Stores an answer for `ttlMs` milliseconds. */
  set(key: string, answer: CheckResult, ttlMs: number): void {
    if (!(ttlMs > 0)) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.evict();
    this.entries.set(key, { answer, expiresAt: this.now() + ttlMs });
  }

  /** Forgets every answer. */
  clear(): void {
    this.entries.clear();
  }

  /** How many answers are held, expired ones included until they are next touched. */
  get size(): number {
    return this.entries.size;
  }

  private evict(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }
}
