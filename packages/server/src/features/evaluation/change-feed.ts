import type { FlagStatus } from "@flagstaff/core";
import { randomUUID } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
import type { Database } from "../../db/schema.js";
import { busy } from "../../errors.js";
import { type Change, type ChangeSet, GLOBAL_STREAM, type Role } from "./changes.js";
import {
  nextStreamVersion,
  readChangeSetsSince,
  type EvaluationRows,
  readEvaluationRows,
  readStreamVersion,
  readStreamVersions,
  recordChangeSet,
} from "./feed.repository.js";
import { type FlagState, ProjectState, Snapshot } from "./snapshot.js";

export interface WriteOutcome<T> {
  readonly result: T;
  readonly changes: readonly Change[];
}

export interface FeedLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How long a change set may wait for an earlier version before the feed reads the log itself. */
const GAP_WAIT_MS = 100;
/**
 * Writes to one stream waiting their turn beyond this many are refused as busy: a project whose writes
 * are stuck (its version row held elsewhere) must not pile up requests without bound.
 */
const MAX_QUEUED_WRITES = 256;

export interface FeedOptions {
  /** The snapshot to keep; a new, empty one by default. */
  readonly snapshot?: Snapshot;
  /** Announces a change set to other instances, inside the write transaction (PostgreSQL NOTIFY). */
  readonly announce?: (trx: Transaction<Database>, set: ChangeSet) => Promise<void>;
  /** Read the snapshot under REPEATABLE READ, so a load sees one consistent state (PostgreSQL). */
  readonly repeatableRead?: boolean;
  /** Called for each change set that another instance wrote, once it is in the snapshot (for metrics). */
  readonly onCaughtUp?: (set: ChangeSet) => void;
}

/**
 * Owns the evaluation snapshot and every path into it. Writes run through `write`, which opens the
 * transaction, takes the stream's next version, records the change set with the data, and after commit
 * applies it to this instance's snapshot before the caller answers. Replicas catch up from the log.
 */
export class ChangeFeed {
  readonly snapshot: Snapshot;
  /** Identifies this instance in the change sets it writes. */
  readonly instanceId = randomUUID();
  private readonly waiting = new Map<string, Map<number, { set: ChangeSet; done: () => void }[]>>();
  /** Until the first load, announced change sets only wait: the load decides what is already in. */
  private loaded = false;
  /** Streams with a catch-up running, and whether another was asked for meanwhile. */
  private readonly catchingUp = new Map<string, { again: boolean }>();
  /** Per stream: the tail of the queue of writes, and how many wait in it. */
  private readonly writeQueues = new Map<string, { tail: Promise<void>; length: number }>();
  /**
   * "stream:version" of this instance's writes until they are in its snapshot. A catch-up woken by the
   * write's own announcement may read it from the log before the commit has even returned here; it is
   * then applied, but it is not another instance's change (not lag).
   */
  private readonly ownWrites = new Set<string>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: FeedLogger,
    private readonly options: FeedOptions = {},
  ) {
    this.snapshot = options.snapshot ?? new Snapshot();
  }

  private readTransaction() {
    const begin = this.db.transaction();
    return this.options.repeatableRead ? begin.setIsolationLevel("repeatable read") : begin;
  }

  /** Loads every project, flag, membership and key into the snapshot, as of one consistent read. */
  async load(): Promise<void> {
    await this.readTransaction().execute(async (trx) => {
      const versions = await readStreamVersions(trx);
      const rows = await readEvaluationRows(trx);
      this.fill(rows);
      for (const [stream, version] of versions) this.snapshot.versions.set(stream, version);
      for (const [projectId, project] of this.snapshot.projects)
        project.evaluationVersion = versions.get(projectId) ?? 0;
    });
    this.loaded = true;
    for (const stream of [...this.waiting.keys()]) this.drain(stream);
    if (this.waiting.size > 0) await this.reconcile();
  }

  /**
   * Runs `work` in one transaction on `stream` (a project id, or GLOBAL_STREAM). Any error rolls the
   * whole write back. Writes to one stream take turns here, before they take a pooled connection: they
   * would serialise on the stream's version row anyway, and a busy project must not hold every
   * connection while its writes wait for that lock, starving the reads and writes of other projects.
   */
  async write<T>(stream: string, work: (trx: Transaction<Database>) => Promise<WriteOutcome<T>>): Promise<T> {
    const release = await this.takeTurn(stream);
    let set: ChangeSet;
    let result: T;
    let own: string | undefined;
    try {
      ({ set, result } = await this.db.transaction().execute(async (trx) => {
        const version = await nextStreamVersion(trx, stream);
        own = `${stream}:${version}`;
        this.ownWrites.add(own);
        const outcome = await work(trx);
        const changeSet: ChangeSet = {
          stream,
          version,
          changes: outcome.changes,
          at: this.clock.now(),
          origin: this.instanceId,
        };
        await recordChangeSet(trx, changeSet, isoTime(this.clock.now()));
        await this.options.announce?.(trx, changeSet);
        return { set: changeSet, result: outcome.result };
      }));
    } catch (error) {
      if (own !== undefined) this.ownWrites.delete(own);
      throw error;
    } finally {
      release();
    }
    try {
      // A feed that was never loaded holds no snapshot (the CLI writes through one): it only records.
      if (this.loaded) await this.deliver(set);
    } finally {
      if (own !== undefined) this.ownWrites.delete(own);
    }
    return result;
  }

  /** Waits until every earlier write to `stream` has finished; answers the function that ends this one's turn. */
  private async takeTurn(stream: string): Promise<() => void> {
    const queue = this.writeQueues.get(stream) ?? { tail: Promise.resolve(), length: 0 };
    if (queue.length >= MAX_QUEUED_WRITES) {
      throw busy(`Too many writes to "${stream}" are waiting; nothing was changed. Try again shortly.`);
    }
    const previous = queue.tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    queue.tail = mine;
    queue.length++;
    this.writeQueues.set(stream, queue);
    await previous;
    return () => {
      queue.length--;
      if (queue.length === 0) this.writeQueues.delete(stream);
      release();
    };
  }

  /**
   * Applies a committed change set in version order; resolves once it is in the snapshot, with false
   * when the snapshot already had it (this instance's own writes, announced back to it).
   */
  deliver(set: ChangeSet): Promise<boolean> {
    const applied = this.snapshot.versions.get(set.stream) ?? 0;
    if (set.version <= applied) return Promise.resolve(false);
    if (set.version === applied + 1 && this.loaded) {
      this.snapshot.apply(set);
      this.drain(set.stream);
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      let byVersion = this.waiting.get(set.stream);
      if (!byVersion) {
        byVersion = new Map();
        this.waiting.set(set.stream, byVersion);
      }
      const list = byVersion.get(set.version) ?? [];
      list.push({ set, done: () => resolve(true) });
      byVersion.set(set.version, list);
      setTimeout(() => {
        if (this.loaded && (this.snapshot.versions.get(set.stream) ?? 0) < set.version) {
          this.catchUp(set.stream).catch((error) => this.logger.warn({ err: error }, "feed catch-up failed"));
        }
      }, GAP_WAIT_MS).unref();
    });
  }

  private drain(stream: string): void {
    const byVersion = this.waiting.get(stream);
    if (!byVersion || !this.loaded) return;
    for (;;) {
      const applied = this.snapshot.versions.get(stream) ?? 0;
      for (const [version, list] of byVersion) {
        if (version <= applied) {
          byVersion.delete(version);
          for (const w of list) w.done();
        }
      }
      const next = byVersion.get(applied + 1);
      if (!next) break;
      byVersion.delete(applied + 1);
      this.snapshot.apply(next[0]!.set);
      for (const w of next) w.done();
    }
    if (byVersion.size === 0) this.waiting.delete(stream);
  }

  /**
   * Catches a stream up from the log, soon: at most one catch-up per stream runs at a time, and hints
   * that arrive meanwhile make it run once more. A hint naming a version this instance already has (its
   * own writes, announced back) costs nothing. Failures are logged; the periodic reconcile repairs them.
   */
  catchUpSoon(stream: string, version?: number): void {
    if (version !== undefined && version <= (this.snapshot.versions.get(stream) ?? 0)) return;
    const running = this.catchingUp.get(stream);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.catchingUp.set(stream, state);
    const run = (): void => {
      state.again = false;
      this.catchUp(stream)
        .catch((error) => this.logger.warn({ err: error, stream }, "feed catch-up failed; the reconcile retries"))
        .finally(() => {
          if (state.again) run();
          else this.catchingUp.delete(stream);
        });
    };
    run();
  }

  /** Reads what this instance missed of a stream from the log; reloads the stream when the log was pruned. */
  async catchUp(stream: string): Promise<void> {
    const applied = this.snapshot.versions.get(stream) ?? 0;
    const sets = await readChangeSetsSince(this.db, stream, applied);
    // The log no longer holds what this instance missed (pruned): read the stream afresh instead.
    const gap =
      sets.length > 0 ? sets[0]!.version !== applied + 1 : (await readStreamVersion(this.db, stream)) > applied;
    if (gap) {
      await this.reloadStream(stream);
      return;
    }
    for (const set of sets) {
      if (set.version !== (this.snapshot.versions.get(stream) ?? 0) + 1) continue;
      this.snapshot.apply(set);
      if (!this.ownWrites.has(`${set.stream}:${set.version}`)) this.options.onCaughtUp?.(set);
    }
    this.drain(stream);
  }

  /** Compares every stream's version with the database and catches up the ones behind. */
  async reconcile(): Promise<void> {
    const versions = await readStreamVersions(this.db);
    for (const [stream, version] of versions) {
      if ((this.snapshot.versions.get(stream) ?? 0) < version) await this.catchUp(stream);
    }
  }

  /** Replaces one stream's part of the snapshot with a fresh read. */
  async reloadStream(stream: string): Promise<void> {
    await this.readTransaction().execute(async (trx) => {
      const versions = await readStreamVersions(trx);
      if (stream === GLOBAL_STREAM) {
        const keys = await trx
          .selectFrom("api_keys")
          .select(["id", "key_hash", "role"])
          .where("project_id", "is", null)
          .execute();
        this.snapshot.dropAdminKeys();
        for (const key of keys) this.snapshot.putKey(key.id, key.key_hash, key.role as Role, null);
      } else {
        this.snapshot.dropProject(stream);
        this.fill(await readEvaluationRows(trx, stream));
        const project = this.snapshot.projects.get(stream);
        if (project) project.evaluationVersion = versions.get(stream) ?? 0;
      }
      this.snapshot.versions.set(stream, versions.get(stream) ?? 0);
    });
    this.drain(stream);
  }

  private fill(rows: EvaluationRows): void {
    const snapshot = this.snapshot;
    for (const project of rows.projects) snapshot.projects.set(project.id, new ProjectState());
    for (const key of rows.keys) snapshot.putKey(key.id, key.key_hash, key.role as Role, key.project_id);
    const flagsById = new Map<string, FlagState>();
    for (const row of rows.flags) {
      const project = snapshot.projects.get(row.project_id);
      if (!project) continue;
      const flag: FlagState = {
        id: row.id,
        name: row.name,
        status: row.status as FlagStatus,
        percentageActors: Number(row.percentage_actors),
        percentageCalls: Number(row.percentage_calls),
        actors: new Set(),
        segments: new Set(),
      };
      project.putFlag(flag);
      flagsById.set(flag.id, flag);
    }
    for (const row of rows.flagActors) flagsById.get(row.flag_id)?.actors.add(row.actor_id);
    for (const row of rows.flagSegments) flagsById.get(row.flag_id)?.segments.add(row.segment_id);
    for (const row of rows.segmentActors) {
      const project = snapshot.projects.get(row.project_id);
      if (!project) continue;
      let members = project.segmentMembers.get(row.segment_id);
      if (!members) {
        members = new Set();
        project.segmentMembers.set(row.segment_id, members);
      }
      members.add(row.actor_id);
    }
  }
}
