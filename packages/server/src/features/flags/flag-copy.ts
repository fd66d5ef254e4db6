import { type Clock, isoTime } from "../../kernel/clock.js";
import { flagNotFound, invalid } from "../../kernel/errors.js";
import type { EnvironmentScope } from "../../access/environment-scope.js";
import type { Writes } from "../../write-path/unit-of-work.js";
import { requireMatch } from "../../write-path/preconditions.js";
import { refuseProtected, refuseUnapproved } from "../environments/environment-guard.js";
import type { FlagUpdate, WriteContext } from "../../write-path/domain-events.js";
import { FlagPresenter, flagTag, type PendingChecks } from "./flag-presenter.js";
import { checkTargeting, flagState, saveLinks, servingChanged, target, updateRecord } from "./flag-writes.js";
import { flagRepository } from "./flag.repository.js";
import type { CopyFlagInput, Flag } from "./flag.schemas.js";
import type { FlagStore } from "./flag.store.js";
import { flagArchived } from "./flag-archive.js";

/** Copies a flag's configuration between environments: a write of its own, beside the flag's CRUD. */
export class FlagCopier {
  private readonly presenter: FlagPresenter;

  constructor(
    private readonly work: Writes,
    checks: PendingChecks,
    private readonly clock: Clock,
    private readonly store: FlagStore = flagRepository,
  ) {
    this.presenter = new FlagPresenter(checks, clock, store);
  }

  /**
   * Copies a flag's configuration from one environment to another (status, percentages, attached actors
   * and segments, variants served, rules and prerequisites) in one write with one history event (`flag.updated` in the target environment, with
   * `copiedFrom`). With `ifMatch`, only if the target's configuration still has one of those ETags.
   */
  async copy(
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    input: CopyFlagInput,
    ifMatch?: string,
  ): Promise<Flag> {
    if (input.from === input.to) {
      throw invalid("from and to name the same environment: there is nothing to copy.", [
        { path: "/to", message: "must differ from from" },
      ]);
    }
    return this.work.write(context, projectId, async (trx) => {
      const from = await this.store.resolveEnvironment(trx, projectId, input.from);
      const to = await this.store.resolveEnvironment(trx, projectId, input.to);
      const source = await this.store.findFlag(trx, projectId, from, name);
      const flag = await this.store.findFlag(trx, projectId, to, name);
      if (!source || !flag) throw flagNotFound(name);
      if (flag.archived) throw flagArchived(name);
      requireMatch(ifMatch, flagTag(flag), `Flag "${name}" in environment "${to}"`);
      const wanted = await this.store.linksOf(trx, source.configId);
      const current = await this.store.linksOf(trx, flag.configId);
      const has = { actors: new Set(current.actors), segments: new Set(current.segments) };
      const want = { actors: new Set(wanted.actors), segments: new Set(wanted.segments) };
      const delta = {
        addActors: wanted.actors.filter((id) => !has.actors.has(id)),
        removeActors: current.actors.filter((id) => !want.actors.has(id)),
        addSegments: wanted.segments.filter((id) => !has.segments.has(id)),
        removeSegments: current.segments.filter((id) => !want.segments.has(id)),
      };
      const next: Flag = {
        ...flag,
        status: source.status,
        percentageActors: source.percentageActors,
        percentageCalls: source.percentageCalls,
        onVariant: source.onVariant,
        offVariant: source.offVariant,
        rules: source.rules,
        prerequisites: source.prerequisites,
        plan: source.plan,
      };
      const targetingChanged = servingChanged(next, flag);
      // The target's other flags may chain differently: its prerequisites are checked there.
      if (targetingChanged) await checkTargeting(this.store, trx, projectId, to, next, undefined);
      const fieldsChanged =
        targetingChanged ||
        next.status !== flag.status ||
        next.percentageActors !== flag.percentageActors ||
        next.percentageCalls !== flag.percentageCalls;
      if (!fieldsChanged && Object.values(delta).every((ids) => ids.length === 0)) {
        return { result: await this.presenter.presentOne(trx, flag, scope.ownOnly), events: [] };
      }
      await refuseProtected(this.store, trx, context, projectId, to);
      await refuseUnapproved(this.store, trx, context, projectId, to);
      const now = isoTime(this.clock.now());
      next.updatedAt = now;
      if (next.status !== flag.status) next.statusChangedAt = now;
      next.revision = flag.revision + 1;
      next.actorsCount = wanted.actors.length;
      next.segmentsCount = wanted.segments.length;
      await this.store.saveConfiguration(trx, next);
      // The actors attached in the source exist already: actors belong to the project.
      await saveLinks(this.store, trx, next, delta, now);
      const after: FlagUpdate = { ...updateRecord(next, delta), copiedFrom: from };
      return {
        result: await this.presenter.presentOne(trx, next, scope.ownOnly),
        events: [
          { type: "flag.updated", projectId, environment: to, target: target(next), before: flagState(flag), after },
        ],
      };
    });
  }
}
