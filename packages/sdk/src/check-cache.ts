interface Entry {
  enabled: boolean;
  expiresAt: number;
}

/** An in-memory cache of check answers, keyed by project, flag and the sorted set of actor ids. */
export class CheckCache {
  private readonly entries = new Map<string, Entry>();

  /** Creates a cache holding at most `maxEntries` answers (the oldest go first). */
  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key of a check: the order and repetition of actor ids do not change the answer, so neither the key. */
  static key(projectId: string, flagName: string, actorIds: readonly string[] | undefined): string {
    const ids = [...new Set(actorIds ?? [])].sort();
    return JSON.stringify([projectId, flagName, ids]);
  }

  /** The cached answer, or undefined when there is none or it has expired. */
  get(key: string): boolean | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.enabled;
  }

  /** Stores an answer for `ttlMs` milliseconds. */
  set(key: string, enabled: boolean, ttlMs: number): void {
    if (!(ttlMs > 0)) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.evict();
    this.entries.set(key, { enabled, expiresAt: this.now() + ttlMs });
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
