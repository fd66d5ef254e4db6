import type { FlagTargeting } from "@flagstaff/core";
import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import type { Page, PageQuery, SortKey } from "../../kernel/pagination.js";
import type { Membership } from "../actors/member-lists.js";
import type { EnvironmentReads } from "../environments/environment.store.js";
import type { FlagOrder } from "./flag-list.repository.js";
import type { Flag, FlagEnvironmentConfiguration, FlagFilter } from "./flag.schemas.js";

// What the flags' service reads and writes: the seam between its decisions and the SQL. The Kysely
// implementation is `flagRepository` (flag.repository.ts); unit tests use an in-memory fake
// (test/unit/fakes/). Every method takes the executor it runs on: a write's methods the transaction the
// unit of work opened, so a write stays one transaction. It includes what the service reads of
// environments, segments and actors.

type Executor = Kysely<Database> | Transaction<Database>;
type Trx = Transaction<Database>;

export interface FlagStore extends EnvironmentReads {
  /** A flag in one environment; undefined when the project has no flag of that name. */
  findFlag(db: Executor, projectId: string, environment: string, name: string): Promise<Flag | undefined>;
  findFlagsByNames(db: Executor, projectId: string, environment: string, names: readonly string[]): Promise<Flag[]>;
  /** Every environment's configuration of these flags, by flag id and environment id (in the environments' order). */
  configurationsOf(
    db: Executor,
    flagIds: readonly string[],
  ): Promise<Map<string, Record<string, FlagEnvironmentConfiguration>>>;
  /** A new flag's definition, and its configuration (as `flag` holds it) in each environment. Throws a unique violation for a name taken. */
  insertFlag(trx: Trx, flag: Flag, environments: readonly string[]): Promise<void>;
  /** Writes a flag's configuration in its environment. */
  saveConfiguration(trx: Trx, flag: Flag): Promise<void>;
  /** Writes a flag's description; every other environment's configuration moves on (revision, updatedAt). */
  saveDescription(trx: Trx, flag: Flag): Promise<void>;
  /** Writes a flag's variants; every other environment's configuration moves on (revision, updatedAt). */
  saveVariants(trx: Trx, flag: Flag): Promise<void>;
  /** Writes out the variants configurations serve by default as the keys they are now. */
  pinDefaultVariants(trx: Trx, flagId: string, defaults: { onVariant: string; offVariant: string }): Promise<void>;
  /** Writes a flag's kind and permanence (its definition's). */
  saveLifecycle(trx: Trx, flag: Flag): Promise<void>;
  /** Marks a flag stale (with why, since when) or not (null). */
  saveStale(trx: Trx, id: string, reason: string | null, since: string | null): Promise<void>;
  /** Archives a flag (`at`) or restores it (null). */
  saveArchived(trx: Trx, id: string, at: string | null): Promise<void>;
  /** Deletes a flag with its configurations and their links. */
  deleteFlag(trx: Trx, id: string): Promise<void>;
  /** A project's flags not archived, with their targeting in one environment: what prerequisite checks read. */
  targetingIn(db: Executor, projectId: string, environment: string): Promise<({ name: string } & FlagTargeting)[]>;
  /** Where, in words, configurations use a variant of `flag` that `dropped` holds (see variantUsesIn). */
  variantUses(
    db: Executor,
    projectId: string,
    flag: { id: string; name: string },
    dropped: ReadonlySet<string>,
    own: { environment: string; targeting: Pick<FlagTargeting, "onVariant" | "offVariant" | "rules"> },
  ): Promise<string[]>;
  /** The environments whose configuration of the flag serves one of `keys`, in id order. */
  environmentsServing(db: Executor, flagId: string, keys: ReadonlySet<string>): Promise<string[]>;
  /** Which of these actors the configuration has attached now. */
  attachedActors(db: Executor, configId: string, actorIds: readonly string[]): Promise<Set<string>>;
  attachActors(
    trx: Trx,
    flag: Pick<Flag, "configId" | "projectId">,
    actorIds: readonly string[],
    at: string,
  ): Promise<void>;
  detachActors(trx: Trx, configId: string, actorIds: readonly string[]): Promise<void>;
  /** Which of these segments the configuration has attached now. */
  attachedSegments(db: Executor, configId: string, segmentIds: readonly string[]): Promise<Set<string>>;
  attachSegments(trx: Trx, configId: string, segmentIds: readonly string[], at: string): Promise<void>;
  detachSegments(trx: Trx, configId: string, segmentIds: readonly string[]): Promise<void>;
  /** Every actor and segment attached to a configuration. */
  linksOf(db: Executor, configId: string): Promise<{ actors: string[]; segments: string[] }>;
  /** A page of the project's flags in one environment, filtered, in `order` (rows in the page's direction, limit + 1). */
  listFlags(
    db: Executor,
    projectId: string,
    environment: string,
    filter: FlagFilter,
    page: PageQuery,
    order?: FlagOrder,
  ): Promise<Flag[]>;
  /** Whether a flag matching the filter lies before or after `key` in `order`. */
  flagsBeyond(
    db: Executor,
    projectId: string,
    environment: string,
    filter: FlagFilter,
    side: "before" | "after",
    key: SortKey,
    order?: FlagOrder,
  ): Promise<boolean>;
  /** How many flags match the filter, whatever the page. */
  countFlags(db: Executor, projectId: string, environment: string, filter: FlagFilter): Promise<number>;

  // What the flags read and write of segments and actors.
  /** Which of these segments exist in the project. */
  existingSegmentIds(db: Executor, projectId: string, ids: readonly string[]): Promise<Set<string>>;
  /** Whether the project has this segment. */
  segmentExists(db: Executor, projectId: string, id: string): Promise<boolean>;
  /** The names of these segments, by id. */
  segmentNames(db: Executor, projectId: string, ids: readonly string[]): Promise<Map<string, string>>;
  /** Adds to the project the actors it does not know yet. */
  ensureActors(trx: Trx, projectId: string, actorIds: readonly string[], at: string): Promise<void>;
  /** A page of the actors attached to a configuration, by actor id, optionally those whose id contains `q`. */
  listFlagActors(db: Executor, configId: string, q: string | undefined, page: PageQuery): Promise<Page<Membership>>;
}
