import { type FlagState, isEnabledForSegment, type ProjectState, referencesOf, servedToActor } from "@flagstaff/core";
import type { Kysely } from "kysely";
import type { EnvironmentScope } from "../../access/environment-scope.js";
import type { Clock } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { segmentNotFound } from "../../kernel/errors.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import { resolveEnvironment } from "../environments/environment.repository.js";
import { FlagPresenter, type PendingChecks } from "../flags/flag-presenter.js";
import * as repo from "../flags/flag.repository.js";
import type { Flag } from "../flags/flag.schemas.js";
import { findSegment } from "../segments/segment.repository.js";
import { anyNameBeyond, pageOfNames } from "./name-scan.js";
import type { Snapshot } from "./snapshot.js";

/**
 * The lists of flags the engine decides (on for an actor, on for or naming a segment): the snapshot picks
 * the names with core's rules, the database fills in the flags.
 */
export class FlagListings {
  private readonly presenter: FlagPresenter;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly snapshot: Snapshot,
    checks: PendingChecks,
    private readonly clock: Clock,
  ) {
    this.presenter = new FlagPresenter(checks);
  }

  /**
   * Flags on for an actor in an environment by what the actor id alone decides (core's servedToActor:
   * evaluateFlag for a context of just that id, at this instant, without the random call rollout): the
   * engine decides from the snapshot, the database fills in the page.
   */
  async listForActor(
    projectId: string,
    scope: EnvironmentScope,
    actorId: string,
    page: PageQuery,
  ): Promise<Page<Flag>> {
    const environment = await resolveEnvironment(this.db, projectId, scope.environment);
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
  ): Promise<Page<Flag>> {
    const environment = await resolveEnvironment(this.db, projectId, scope.environment);
    if (!(await findSegment(this.db, projectId, segmentId))) throw segmentNotFound(segmentId);
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
  ): Promise<Page<Flag>> {
    const state = this.snapshot.projects.get(projectId)?.environments.get(environment);
    if (!state) return { data: [], pagination: { before: null, after: null } };
    const names = state.flagNamesInOrder();
    const matches = (flagName: string) => {
      const flag = state.flagsByName.get(flagName);
      return flag !== undefined && selected(flag, state);
    };
    const picked = pageOfNames(names, page, matches);
    const found = await repo.findFlagsByNames(this.db, projectId, environment, picked);
    const byName = new Map(found.map((f) => [f.name, f]));
    const rows = picked.map((n) => byName.get(n)).filter((f): f is Flag => f !== undefined);
    const result = await assemblePage(
      page,
      rows,
      (f) => [f.name],
      (side, key) => anyNameBeyond(names, side, key[0] as string, matches),
    );
    return { ...result, data: await this.presenter.present(this.db, result.data, ownOnly) };
  }
}
