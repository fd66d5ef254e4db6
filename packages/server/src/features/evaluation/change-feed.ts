import type { FlagStatus, GrantRole, UserRole } from "@flagstaff/core";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import { type ChangeSet, GLOBAL_STREAM } from "../../write-path/changes.js";
import type { Role } from "../../access/principal.js";
import {
  readChangeSetsSince,
  type EvaluationRows,
  readEvaluationRows,
  readPeopleRows,
  readStreamVersion,
  readStreamVersions,
} from "./feed.repository.js";
import { type FlagState, ProjectEnvironments, Snapshot } from "./snapshot.js";
import { conditionsOf, planOf, targetingOf } from "../../db/targeting.js";

export interface FeedLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How long a change set may wait for an earlier version before the feed reads the log itself. */
const GAP_WAIT_MS = 100;

export interface FeedOptions {
  /** The snapshot to keep; a new, empty one by default. */
  readonly snapshot?: Snapshot;
  /** Read the snapshot under REPEATABLE READ, so a load sees one consistent state (PostgreSQL). */
  readonly repeatableRead?: boolean;
  /** Called for each change set that another instance wrote, once it is in the snapshot (for metrics). */
  readonly onCaughtUp?: (set: ChangeSet) => void;
}

/**
 * Owns the evaluation snapshot and every path into it: the load, this instance's own committed change
 * sets (from the unit of work's bus, `applyOwn`), and other instances' change sets, read from the log in
 * version order when a notification or the periodic reconcile says the stream moved.
 */
export class ChangeFeed {
  readonly snapshot: Snapshot;
  private readonly waiting = new Map<string, Map<number, { set: ChangeSet; done: () => void }[]>>();
  /** Until the first load, announced change sets only wait: the load decides what is already in. */
  private loaded = false;
  /** Streams with a catch-up running, and whether another was asked for meanwhile. */
  private readonly catchingUp = new Map<string, { again: boolean }>();

  constructor(
    private readonly db: Kysely<Database>,
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
      this.fillPeople(await readPeopleRows(trx));
      for (const [stream, version] of versions) this.snapshot.versions.set(stream, version);
      for (const [projectId, project] of this.snapshot.projects)
        for (const state of project.environments.values()) state.evaluationVersion = versions.get(projectId) ?? 0;
    });
    this.loaded = true;
    for (const stream of [...this.waiting.keys()]) this.drain(stream);
    if (this.waiting.size > 0) await this.reconcile();
  }

  /**
   * Applies a change set this instance committed (the unit of work's bus delivers it after commit), so
   * the caller is answered only once its write is in this instance's snapshot. A feed not loaded yet
   * holds no snapshot to apply it to: the load will read it.
   */
  async applyOwn(set: ChangeSet): Promise<void> {
    if (this.loaded) await this.deliver(set);
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
    // One read (a snapshot on PostgreSQL): read apart, a write committed between the two reads would look
    // like a pruned log and reread the whole stream for nothing.
    const { sets, version } = await this.readTransaction().execute(async (trx) => ({
      sets: await readChangeSetsSince(trx, stream, applied),
      version: await readStreamVersion(trx, stream),
    }));
    // The log no longer holds what this instance missed (pruned): read the stream afresh instead.
    const gap = sets.length > 0 ? sets[0]!.version !== applied + 1 : version > applied;
    if (gap) {
      await this.reloadStream(stream);
      return;
    }
    for (const set of sets) {
      if (set.version !== (this.snapshot.versions.get(stream) ?? 0) + 1) continue;
      this.snapshot.apply(set);
      this.options.onCaughtUp?.(set);
    }
    this.drain(stream);
  }

  /**
   * Resolves once the snapshot holds a stream at `version` or beyond, or after `timeoutMs` (a version
   * that was never written must not hold a request for long); asks for a catch-up meanwhile.
   */
  reach(stream: string, version: number, timeoutMs: number): Promise<void> {
    const reached = () => (this.snapshot.versions.get(stream) ?? 0) >= version;
    if (reached()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unlisten();
        resolve();
      };
      const check = (changed: string) => {
        if (changed === stream && reached()) done();
      };
      const unlisten = this.snapshot.listen({ applied: (set) => check(set.stream), reloaded: check });
      const timer = setTimeout(done, timeoutMs);
      this.catchUpSoon(stream, version);
    });
  }

  /** Compares every stream's version with the database and catches up the ones behind. */
  async reconcile(): Promise<void> {
    const versions = await readStreamVersions(this.db);
    for (const [stream, version] of versions) {
      if ((this.snapshot.versions.get(stream) ?? 0) < version) await this.catchUp(stream);
    }
  }

  /**
   * Replaces one stream's part of the snapshot with a fresh read. Everything is read first and swapped in
   * without an await between dropping the old state and filling the new, so no request ever meets the
   * stream half-read (a valid key refused, a flag or a grant missing).
   */
  async reloadStream(stream: string): Promise<void> {
    await this.readTransaction().execute(async (trx) => {
      const versions = await readStreamVersions(trx);
      if (stream === GLOBAL_STREAM) {
        const keys = await trx
          .selectFrom("api_keys")
          .select(["id", "name", "key_hash", "role", "project_id", "environment_id", "user_id"])
          .where((eb) => eb.or([eb("project_id", "is", null), eb("user_id", "is not", null)]))
          .execute();
        const people = await readPeopleRows(trx);
        this.snapshot.dropGlobalKeys();
        for (const key of keys) this.putKeyRow(key);
        this.snapshot.people.clear();
        this.fillPeople(people);
      } else {
        const rows = await readEvaluationRows(trx, stream);
        // Grants belong to the global stream: a project's reread keeps them.
        this.snapshot.dropProject(stream, { keepGrants: true });
        this.fill(rows);
        const project = this.snapshot.projects.get(stream);
        for (const state of project?.environments.values() ?? []) state.evaluationVersion = versions.get(stream) ?? 0;
      }
      this.snapshot.versions.set(stream, versions.get(stream) ?? 0);
    });
    this.snapshot.reloaded(stream);
    this.drain(stream);
  }

  private putKeyRow(key: EvaluationRows["keys"][number]): void {
    this.snapshot.putKey(
      key.id,
      key.key_hash,
      key.role as Role,
      key.project_id,
      key.name,
      key.environment_id,
      key.user_id,
    );
  }

  private fillPeople(rows: Awaited<ReturnType<typeof readPeopleRows>>): void {
    const people = this.snapshot.people;
    for (const user of rows.users) {
      people.putPerson({
        id: user.id,
        email: user.email,
        name: user.name,
        role: user.role as UserRole,
        disabled: Number(user.disabled) === 1,
      });
    }
    for (const grant of rows.grants) people.putGrant(grant.user_id, grant.project_id, grant.role as GrantRole);
  }

  private fill(rows: EvaluationRows): void {
    const snapshot = this.snapshot;
    const environments = new Map<string, string[]>();
    const defaults = new Map<string, string>();
    for (const row of rows.environments) {
      const list = environments.get(row.project_id) ?? [];
      list.push(row.id);
      environments.set(row.project_id, list);
      if (Number(row.is_default) === 1) defaults.set(row.project_id, row.id);
    }
    for (const project of rows.projects) {
      const ids = environments.get(project.id) ?? [];
      snapshot.projects.set(project.id, new ProjectEnvironments(ids, defaults.get(project.id) ?? ids[0] ?? ""));
    }
    for (const key of rows.keys) this.putKeyRow(key);
    const flagsByConfig = new Map<string, FlagState>();
    for (const row of rows.flags) {
      const state = snapshot.projects.get(row.project_id)?.environments.get(row.environment_id);
      if (!state) continue;
      const flag: FlagState = {
        id: row.id,
        name: row.name,
        status: row.status as FlagStatus,
        percentageActors: Number(row.percentage_actors),
        percentageCalls: Number(row.percentage_calls),
        actors: new Set(),
        segments: new Set(),
        ...targetingOf(row),
        rolloutPlan: planOf(row.rollout_plan),
      };
      state.putFlag(flag);
      flagsByConfig.set(row.config_id, flag);
    }
    for (const row of rows.flagActors) flagsByConfig.get(row.config_id)?.actors.add(row.actor_id);
    for (const row of rows.flagSegments) flagsByConfig.get(row.config_id)?.segments.add(row.segment_id);
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
    for (const row of rows.segmentConditions) {
      const conditions = conditionsOf(row.conditions);
      if (conditions.length > 0) snapshot.projects.get(row.project_id)?.segmentConditions.set(row.id, conditions);
    }
  }
}
