import type { Membership } from "../../../src/features/actors/member-lists.js";
import { toEnvironment } from "../../../src/features/environments/environment.repository.js";
import type { Environment } from "../../../src/features/environments/environment.schemas.js";
import type { EnvironmentStore, PlacedEnvironment } from "../../../src/features/environments/environment.store.js";
import { flagOrder } from "../../../src/features/flags/flag-list.repository.js";
import { configIdOf, type FlagRow, toFlag } from "../../../src/features/flags/flag-rows.js";
import { serves, variantUsesIn } from "../../../src/features/flags/flag.repository.js";
import type { Flag, FlagEnvironmentConfiguration, FlagFilter } from "../../../src/features/flags/flag.schemas.js";
import type { FlagStore } from "../../../src/features/flags/flag.store.js";
import { configurationColumns, planColumn, targetingOf, variantsColumn } from "../../../src/db/targeting.js";
import type { PeopleStore } from "../../../src/features/people/people.store.js";
import { environmentNotFound, projectNotFound } from "../../../src/kernel/errors.js";
import { assemblePage, type PageQuery } from "../../../src/kernel/pagination.js";
import { memoryPeopleStore } from "./memory-people.js";
import {
  anyBeyond,
  type ConfigRow,
  compare,
  type EnvironmentRow,
  type Executor,
  emptyTables,
  type FlagDefinition,
  keysetSlice,
  likeText,
  type MemoryTables,
  type Trx,
  uniqueViolation,
} from "./memory-tables.js";

// In-memory fakes of the flags', environments' and people's stores (the interfaces in
// src/features/*/*.store.ts), over one set of in-memory tables shaped as the database's, so that a write
// through one store is seen by the others as on the database. They behave as the Kysely implementations
// do for what the services use: the same rows, the same orders, the same unique violations, the same
// cascades. test/unit/store-contract.test.ts runs the same cases on both, so that they cannot drift apart.
// A FakeUnitOfWork (fake-unit-of-work.ts) gives them a write's all-or-nothing. The people's store is in
// memory-people.ts, the tables and what answers as SQL does in memory-tables.ts.

export class MemoryStores {
  tables: MemoryTables = emptyTables();

  // Seeding, for tests: what other features' services would have written. ----------------------------

  /** A project with these environments (the first the default), as the projects' service makes it. */
  addProject(
    id: string,
    environments: readonly { id: string; protected?: boolean }[],
    at = "2026-01-01T00:00:00.000Z",
  ) {
    this.tables.projects.set(id, { id, name: id, createdAt: at });
    for (const [index, e] of environments.entries()) {
      this.tables.environments.push({
        project_id: id,
        id: e.id,
        name: e.id,
        description: "",
        is_default: index === 0 ? 1 : 0,
        protected: e.protected ? 1 : 0,
        required_approvals: 0,
        allow_self_approval: 0,
        position: index + 1,
        created_at: at,
        updated_at: at,
      });
    }
  }

  addSegment(projectId: string, id: string, name = id): void {
    let segments = this.tables.segments.get(projectId);
    if (!segments) {
      segments = new Map();
      this.tables.segments.set(projectId, segments);
    }
    segments.set(id, name);
  }

  /** The actors a project knows. */
  actorsOf(projectId: string): string[] {
    return [...(this.tables.actors.get(projectId)?.keys() ?? [])];
  }

  // Shared reads. ---------------------------------------------------------------------------------

  private environmentRows(projectId: string): EnvironmentRow[] {
    return this.tables.environments
      .filter((e) => e.project_id === projectId)
      .sort((a, b) => Number(a.position) - Number(b.position));
  }

  private configOf(flagId: string, environment: string): ConfigRow | undefined {
    for (const c of this.tables.configs.values())
      if (c.flag_id === flagId && c.environment_id === environment) return c;
    return undefined;
  }

  private configsOfFlag(flagId: string): ConfigRow[] {
    return [...this.tables.configs.values()].filter((c) => c.flag_id === flagId);
  }

  private flagsOf(projectId: string): FlagDefinition[] {
    return [...this.tables.flags.values()].filter((f) => f.project_id === projectId);
  }

  /** The project's flags joined with their configuration in one environment. */
  private rowsIn(projectId: string, environment: string): FlagRow[] {
    const rows: FlagRow[] = [];
    for (const flag of this.flagsOf(projectId)) {
      const config = this.configOf(flag.id, environment);
      if (config) rows.push(joined(flag, config));
    }
    return rows;
  }

  private flagsMatching(projectId: string, environment: string, filter: FlagFilter): Flag[] {
    return this.rowsIn(projectId, environment)
      .map(toFlag)
      .filter(
        (f) =>
          (filter.name === undefined || likeText(f.name, filter.name)) &&
          (filter.q === undefined || likeText(f.name, filter.q) || likeText(f.description, filter.q)) &&
          (filter.status === undefined || f.status === filter.status) &&
          (filter.kind === undefined || f.kind === filter.kind) &&
          (filter.stale === undefined || f.stale === filter.stale) &&
          f.archived === (filter.archived === true),
      );
  }

  private deleteConfig(configId: string): void {
    this.tables.configs.delete(configId);
    this.tables.flagActors.delete(configId);
    this.tables.flagSegments.delete(configId);
  }

  private links(table: "flagActors" | "flagSegments", configId: string): Map<string, string> {
    let links = this.tables[table].get(configId);
    if (!links) {
      links = new Map();
      this.tables[table].set(configId, links);
    }
    return links;
  }

  // The environments' store. ----------------------------------------------------------------------

  readonly environments: EnvironmentStore = {
    findProject: async (_db: Executor, projectId: string) => this.tables.projects.get(projectId),
    listEnvironments: async (_db: Executor, projectId: string) => this.environmentRows(projectId).map(toEnvironment),
    listPlacedEnvironments: async (_db: Executor, projectId: string): Promise<PlacedEnvironment[]> =>
      this.environmentRows(projectId).map((row) => ({
        environment: toEnvironment(row),
        position: Number(row.position),
      })),
    findEnvironment: async (_db: Executor, projectId: string, id: string) => {
      const row = this.environmentRows(projectId).find((e) => e.id === id);
      return row && toEnvironment(row);
    },
    resolveEnvironment: async (_db: Executor, projectId: string, named: string | null) => {
      const row = this.environmentRows(projectId).find((e) => (named === null ? e.is_default === 1 : e.id === named));
      if (row) return row.id;
      if (named === null || !this.tables.projects.has(projectId)) throw projectNotFound(projectId);
      throw environmentNotFound(named);
    },
    countEnvironments: async (_db: Executor, projectId: string) => this.environmentRows(projectId).length,
    protectedAmong: async (_db: Executor, projectId: string, ids: readonly string[]) =>
      this.environmentRows(projectId)
        .filter((e) => ids.includes(e.id) && e.protected === 1)
        .map((e) => e.id)
        .sort(compare),
    requiredApprovals: async (_db: Executor, projectId: string, environment: string) =>
      Number(this.environmentRows(projectId).find((e) => e.id === environment)?.required_approvals ?? 0),
    insertEnvironment: async (_trx: Trx, environment: Environment) => {
      const rows = this.environmentRows(environment.projectId);
      if (rows.some((e) => e.id === environment.id)) throw uniqueViolation("environments.project_id, environments.id");
      this.tables.environments.push({
        project_id: environment.projectId,
        id: environment.id,
        name: environment.name,
        description: environment.description,
        is_default: environment.default ? 1 : 0,
        protected: environment.protected ? 1 : 0,
        required_approvals: environment.requiredApprovals,
        allow_self_approval: environment.allowSelfApproval ? 1 : 0,
        position: Math.max(0, ...rows.map((e) => Number(e.position))) + 1,
        created_at: environment.createdAt,
        updated_at: environment.updatedAt,
      });
    },
    insertEnvironmentConfigurations: async (
      _trx: Trx,
      projectId: string,
      environment: string,
      copyFrom: string | undefined,
      at: string,
    ) => {
      for (const flag of this.flagsOf(projectId)) {
        const configId = configIdOf(flag.id, environment);
        const base = { config_id: configId, flag_id: flag.id, environment_id: environment, updated_at: at };
        const fresh = { latest_checked_at: null, status_changed_at: at, revision: 1 };
        if (copyFrom === undefined) {
          this.tables.configs.set(configId, {
            ...base,
            ...fresh,
            status: "disabled",
            percentage_actors: 0,
            percentage_calls: 0,
            actors_count: 0,
            segments_count: 0,
            on_variant: null,
            off_variant: null,
            rules: null,
            prerequisites: null,
            rollout_plan: null,
          });
          continue;
        }
        const source = this.configOf(flag.id, copyFrom);
        if (!source) continue;
        this.tables.configs.set(configId, { ...source, ...base, ...fresh });
        for (const table of ["flagActors", "flagSegments"] as const) {
          const linked = this.tables[table].get(source.config_id);
          if (linked) this.tables[table].set(configId, new Map([...linked.keys()].map((id) => [id, at])));
        }
      }
    },
    saveEnvironment: async (_trx: Trx, environment: Environment) => {
      const row = this.environmentRows(environment.projectId).find((e) => e.id === environment.id);
      if (!row) return;
      Object.assign(row, {
        name: environment.name,
        description: environment.description,
        is_default: environment.default ? 1 : 0,
        protected: environment.protected ? 1 : 0,
        required_approvals: environment.requiredApprovals,
        allow_self_approval: environment.allowSelfApproval ? 1 : 0,
        updated_at: environment.updatedAt,
      });
    },
    reorderEnvironments: async (_trx: Trx, projectId: string, ids: readonly string[]) => {
      const rows = this.environmentRows(projectId);
      const base = Math.max(0, ...rows.map((e) => Number(e.position)));
      for (const [index, id] of ids.entries()) {
        const row = rows.find((e) => e.id === id);
        if (row) row.position = base + 1 + index;
      }
    },
    clearDefault: async (_trx: Trx, projectId: string, at: string) => {
      for (const row of this.environmentRows(projectId)) {
        if (row.is_default === 1) Object.assign(row, { is_default: 0, updated_at: at });
      }
    },
    keysOf: async (_db: Executor, projectId: string, environment: string) =>
      this.tables.keys
        .filter((k) => k.project_id === projectId && k.environment_id === environment)
        .map(({ id, name, role }) => ({ id, name, role })),
    deleteKeysOf: async (_trx: Trx, projectId: string, environment: string) => {
      this.tables.keys = this.tables.keys.filter(
        (k) => !(k.project_id === projectId && k.environment_id === environment),
      );
    },
    deleteEnvironment: async (_trx: Trx, projectId: string, id: string) => {
      for (const flag of this.flagsOf(projectId)) {
        const config = this.configOf(flag.id, id);
        if (config) this.deleteConfig(config.config_id);
      }
      this.tables.environments = this.tables.environments.filter((e) => !(e.project_id === projectId && e.id === id));
    },
  };

  // The flags' store. -----------------------------------------------------------------------------

  readonly flags: FlagStore = {
    listEnvironments: this.environments.listEnvironments,
    resolveEnvironment: this.environments.resolveEnvironment,
    countEnvironments: this.environments.countEnvironments,
    protectedAmong: this.environments.protectedAmong,
    requiredApprovals: this.environments.requiredApprovals,
    findFlag: async (_db: Executor, projectId: string, environment: string, name: string) => {
      const row = this.rowsIn(projectId, environment).find((r) => r.name === name);
      return row && toFlag(row);
    },
    findFlagsByNames: async (_db: Executor, projectId: string, environment: string, names: readonly string[]) =>
      this.rowsIn(projectId, environment)
        .filter((r) => names.includes(r.name))
        .map(toFlag),
    configurationsOf: async (_db: Executor, flagIds: readonly string[]) => {
      const byFlag = new Map<string, Record<string, FlagEnvironmentConfiguration>>();
      for (const id of [...flagIds].sort(compare)) {
        const flag = this.tables.flags.get(id);
        if (!flag || byFlag.has(id)) continue;
        const configurations: Record<string, FlagEnvironmentConfiguration> = {};
        for (const environment of this.environmentRows(flag.project_id)) {
          const config = this.configOf(id, environment.id);
          if (!config) continue;
          configurations[environment.id] = {
            status: config.status as Flag["status"],
            percentageActors: Number(config.percentage_actors) as Flag["percentageActors"],
            percentageCalls: Number(config.percentage_calls) as Flag["percentageCalls"],
            statusChangedAt: config.status_changed_at,
          };
        }
        if (Object.keys(configurations).length > 0) byFlag.set(id, configurations);
      }
      return byFlag;
    },
    insertFlag: async (_trx: Trx, flag: Flag, environments: readonly string[]) => {
      if (this.tables.flags.has(flag.id)) throw uniqueViolation("flags.id");
      if (this.flagsOf(flag.projectId).some((f) => f.name === flag.name)) {
        throw uniqueViolation("flags.project_id, flags.name");
      }
      this.tables.flags.set(flag.id, {
        id: flag.id,
        project_id: flag.projectId,
        name: flag.name,
        description: flag.description,
        created_at: flag.createdAt,
        type: flag.type,
        variants: variantsColumn(flag.type, flag.variants),
        kind: flag.kind,
        permanent: flag.permanent ? 1 : 0,
        stale_reason: null,
        stale_since: null,
        archived_at: null,
      });
      for (const environment of environments) {
        const configId = configIdOf(flag.id, environment);
        this.tables.configs.set(configId, {
          config_id: configId,
          flag_id: flag.id,
          environment_id: environment,
          status: flag.status,
          percentage_actors: flag.percentageActors,
          percentage_calls: flag.percentageCalls,
          updated_at: flag.updatedAt,
          latest_checked_at: null,
          status_changed_at: flag.statusChangedAt,
          revision: flag.revision,
          actors_count: 0,
          segments_count: 0,
          ...configurationColumns(flag),
          rollout_plan: planColumn(flag.plan),
        });
      }
    },
    saveConfiguration: async (_trx: Trx, flag: Flag) => {
      const config = this.tables.configs.get(flag.configId);
      if (!config) return;
      Object.assign(config, {
        status: flag.status,
        percentage_actors: flag.percentageActors,
        percentage_calls: flag.percentageCalls,
        updated_at: flag.updatedAt,
        status_changed_at: flag.statusChangedAt,
        revision: flag.revision,
        actors_count: flag.actorsCount,
        segments_count: flag.segmentsCount,
        ...configurationColumns(flag),
        rollout_plan: planColumn(flag.plan),
      });
    },
    saveDescription: async (_trx: Trx, flag: Flag) => {
      const definition = this.tables.flags.get(flag.id);
      if (definition) definition.description = flag.description;
      this.moveOthers(flag);
    },
    saveVariants: async (_trx: Trx, flag: Flag) => {
      const definition = this.tables.flags.get(flag.id);
      if (definition) definition.variants = variantsColumn(flag.type, flag.variants);
      this.moveOthers(flag);
    },
    pinDefaultVariants: async (_trx: Trx, flagId: string, defaults: { onVariant: string; offVariant: string }) => {
      for (const config of this.configsOfFlag(flagId)) {
        config.on_variant ??= defaults.onVariant;
        config.off_variant ??= defaults.offVariant;
      }
    },
    saveLifecycle: async (_trx: Trx, flag: Flag) => {
      const definition = this.tables.flags.get(flag.id);
      if (definition) {
        definition.kind = flag.kind;
        definition.permanent = flag.permanent ? 1 : 0;
      }
    },
    saveStale: async (_trx: Trx, id: string, reason: string | null, since: string | null) => {
      const definition = this.tables.flags.get(id);
      if (definition) {
        definition.stale_reason = reason;
        definition.stale_since = since;
      }
    },
    saveArchived: async (_trx: Trx, id: string, at: string | null) => {
      const definition = this.tables.flags.get(id);
      if (definition) definition.archived_at = at;
    },
    deleteFlag: async (_trx: Trx, id: string) => {
      for (const config of this.configsOfFlag(id)) this.deleteConfig(config.config_id);
      this.tables.flags.delete(id);
    },
    targetingIn: async (_db: Executor, projectId: string, environment: string) =>
      this.rowsIn(projectId, environment)
        .filter((row) => row.archived_at === null)
        .map((row) => ({ name: row.name, ...targetingOf(row) })),
    variantUses: async (_db, projectId, flag, dropped, own) => {
      if (dropped.size === 0) return [];
      const configurations = this.flagsOf(projectId)
        .flatMap((f) => this.configsOfFlag(f.id).map((c) => joined(f, c)))
        .sort((a, b) => compare(a.name, b.name) || compare(a.environment_id, b.environment_id))
        .map((row) => ({
          flagId: row.id,
          flag: row.name,
          environment: row.environment_id,
          targeting: targetingOf(row),
        }));
      return variantUsesIn(configurations, flag, dropped, own);
    },
    environmentsServing: async (_db: Executor, flagId: string, keys: ReadonlySet<string>) => {
      const flag = this.tables.flags.get(flagId);
      if (keys.size === 0 || !flag) return [];
      return this.configsOfFlag(flagId)
        .filter((c) => serves(targetingOf(joined(flag, c)), keys))
        .map((c) => c.environment_id)
        .sort(compare);
    },
    attachedActors: async (_db: Executor, configId: string, actorIds: readonly string[]) =>
      new Set(actorIds.filter((id) => this.tables.flagActors.get(configId)?.has(id))),
    attachActors: async (_trx: Trx, flag, actorIds, at) => {
      const links = this.links("flagActors", flag.configId);
      for (const id of actorIds) {
        if (links.has(id)) throw uniqueViolation("flag_actors.config_id, flag_actors.actor_id");
        links.set(id, at);
      }
    },
    detachActors: async (_trx: Trx, configId: string, actorIds: readonly string[]) => {
      for (const id of actorIds) this.tables.flagActors.get(configId)?.delete(id);
    },
    attachedSegments: async (_db: Executor, configId: string, segmentIds: readonly string[]) =>
      new Set(segmentIds.filter((id) => this.tables.flagSegments.get(configId)?.has(id))),
    attachSegments: async (_trx: Trx, configId: string, segmentIds: readonly string[], at: string) => {
      const links = this.links("flagSegments", configId);
      for (const id of segmentIds) {
        if (links.has(id)) throw uniqueViolation("flag_segments.config_id, flag_segments.segment_id");
        links.set(id, at);
      }
    },
    detachSegments: async (_trx: Trx, configId: string, segmentIds: readonly string[]) => {
      for (const id of segmentIds) this.tables.flagSegments.get(configId)?.delete(id);
    },
    linksOf: async (_db: Executor, configId: string) => ({
      actors: [...(this.tables.flagActors.get(configId)?.keys() ?? [])],
      segments: [...(this.tables.flagSegments.get(configId)?.keys() ?? [])],
    }),
    listFlags: async (_db, projectId, environment, filter, page, order = flagOrder("name")) =>
      keysetSlice(this.flagsMatching(projectId, environment, filter), order.keyOf, descendingOf(order), page),
    flagsBeyond: async (_db, projectId, environment, filter, side, key, order = flagOrder("name")) =>
      anyBeyond(this.flagsMatching(projectId, environment, filter), order.keyOf, descendingOf(order), side, key),
    countFlags: async (_db, projectId, environment, filter) =>
      this.flagsMatching(projectId, environment, filter).length,
    existingSegmentIds: async (_db: Executor, projectId: string, ids: readonly string[]) =>
      new Set(ids.filter((id) => this.tables.segments.get(projectId)?.has(id))),
    segmentExists: async (_db: Executor, projectId: string, id: string) =>
      this.tables.segments.get(projectId)?.has(id) === true,
    segmentNames: async (_db: Executor, projectId: string, ids: readonly string[]) => {
      const names = new Map<string, string>();
      for (const id of ids) {
        const name = this.tables.segments.get(projectId)?.get(id);
        if (name !== undefined) names.set(id, name);
      }
      return names;
    },
    ensureActors: async (_trx: Trx, projectId: string, actorIds: readonly string[], at: string) => {
      let actors = this.tables.actors.get(projectId);
      if (!actors) {
        actors = new Map();
        this.tables.actors.set(projectId, actors);
      }
      for (const id of actorIds) if (!actors.has(id)) actors.set(id, at);
    },
    listFlagActors: async (_db: Executor, configId: string, q: string | undefined, page: PageQuery) => {
      const members: Membership[] = [...(this.tables.flagActors.get(configId)?.entries() ?? [])]
        .filter(([id]) => q === undefined || q === "" || likeText(id, q))
        .map(([actorId, addedAt]) => ({ actorId, addedAt }));
      const keyOf = (m: Membership) => [m.actorId];
      return assemblePage(page, keysetSlice(members, keyOf, [false], page), keyOf, async (side, key) =>
        anyBeyond(members, keyOf, [false], side, key),
      );
    },
  };

  /** A change of a flag's definition moves every other environment's configuration on. */
  private moveOthers(flag: Flag): void {
    for (const config of this.configsOfFlag(flag.id)) {
      if (config.config_id === flag.configId) continue;
      config.revision = Number(config.revision) + 1;
      config.updated_at = flag.updatedAt;
    }
  }

  readonly people: PeopleStore = memoryPeopleStore(this, this.environments);
}

const joined = (flag: FlagDefinition, config: ConfigRow): FlagRow => ({ ...flag, ...config });

/** Each sort column's direction in a flag order. */
const descendingOf = (order: { columns: readonly (string | { descending?: boolean })[] }) =>
  order.columns.map((c) => typeof c !== "string" && c.descending === true);
