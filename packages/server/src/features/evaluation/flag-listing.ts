import { type FlagState, isEnabledForSegment, type ProjectState, referencesOf, servedToActor } from "@flagstaff/core";
import type { EnvironmentScope } from "../../access/environment-scope.js";
import type { Clock } from "../../kernel/clock.js";
import { segmentNotFound } from "../../kernel/errors.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import { anyNameBeyond, pageOfNames } from "./name-scan.js";
import type { Snapshot } from "./snapshot.js";

/**
 * What the listings read of the domain's rows: the flags module hands in the features' repositories and
 * presenter (the read model imports no feature).
 */
/** F: a flag as the flags feature answers it (only its name matters here). */
export interface FlagRows<F extends { readonly name: string }> {
  /** The environment a request names, or the project's default; 404 for an unknown project or environment. */
  resolveEnvironment(projectId: string, environment: string | null): Promise<string>;
  segmentExists(projectId: string, segmentId: string): Promise<boolean>;
  /** The flags of these names in an environment (those that exist), in any order. */
  findFlagsByNames(projectId: string, environment: string, names: readonly string[]): Promise<F[]>;
  /** Flags as answered: with their environments' configurations (only their own with ownOnly) and ETags. */
  present(flags: F[], ownOnly: boolean): Promise<F[]>;
}

/**
 * The lists of flags the engine decides (on for an actor, on for or naming a segment): the snapshot picks
 * the names with core's rules, the database fills in the flags.
 */
export class FlagListings<F extends { readonly name: string }> {
  constructor(
    private readonly rows: FlagRows<F>,
    private readonly snapshot: Snapshot,
    private readonly clock: Clock,
  ) {}

  /**
   * Flags on for an actor in an environment by what the actor id alone decides (core's servedToActor:
   * evaluateFlag for a context of just that id, at this instant, without the random call rollout): the
   * engine decides from the snapshot, the database fills in the page.
   */
  async listForActor(projectId: string, scope: EnvironmentScope, actorId: string, page: PageQuery): Promise<Page<F>> {
    const environment = await this.rows.resolveEnvironment(projectId, scope.environment);
    const now = this.clock.now();
    let served: ((flag: FlagState, actorId: string) => boolean) | undefined;
    return this.pageDecidedByEngine(projectId, environment, scope.ownOnly, page, (flag, state) => {
      served ??= servedToActor({
        isMember: state.isMember,
        segmentConditions: (id) => state.segmentConditions(id),
        flag: (name) => state.flag(name),
        now: () => now,
      });
      return served(flag, actorId);
    });
  }

  /**
   * A segment's flags in an environment: those enabled for it (enabled, or conditional with it attached,
   * as the seed decides) and those whose configuration's rules name it (core's referencesOf), whatever
   * their status.
   */
  async listForSegment(
    projectId: string,
    scope: EnvironmentScope,
    segmentId: string,
    page: PageQuery,
  ): Promise<Page<F>> {
    const environment = await this.rows.resolveEnvironment(projectId, scope.environment);
    if (!(await this.rows.segmentExists(projectId, segmentId))) throw segmentNotFound(segmentId);
    return this.pageDecidedByEngine(
      projectId,
      environment,
      scope.ownOnly,
      page,
      (flag) => isEnabledForSegment(flag, segmentId) || referencesOf(flag).segments.includes(segmentId),
    );
  }

  /**
   * A page of the flags the evaluation rules select, in name order: the snapshot picks the names (one
   * home for the rules, no SQL copy of them), the database fills in the flags' fields.
   */
  private async pageDecidedByEngine(
    projectId: string,
    environment: string,
    ownOnly: boolean,
    page: PageQuery,
    selected: (flag: FlagState, state: ProjectState) => boolean,
  ): Promise<Page<F>> {
    const state = this.snapshot.projects.get(projectId)?.environments.get(environment);
    if (!state) return { data: [], pagination: { before: null, after: null } };
    const names = state.flagNamesInOrder();
    const matches = (flagName: string) => {
      const flag = state.flagsByName.get(flagName);
      return flag !== undefined && selected(flag, state);
    };
    const picked = pageOfNames(names, page, matches);
    const found = await this.rows.findFlagsByNames(projectId, environment, picked);
    const byName = new Map(found.map((f) => [f.name, f]));
    const rows = picked.map((n) => byName.get(n)).filter((f): f is F => f !== undefined);
    const result = await assemblePage(
      page,
      rows,
      (f) => [f.name],
      (side, key) => anyNameBeyond(names, side, key[0] as string, matches),
    );
    return { ...result, data: await this.rows.present(result.data, ownOnly) };
  }
}
