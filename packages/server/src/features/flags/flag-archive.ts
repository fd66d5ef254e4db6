import type { EnvironmentScope } from "../../access/environment-scope.js";
import { type Clock, isoTime } from "../../kernel/clock.js";
import { AppError, flagNotFound } from "../../kernel/errors.js";
import { requireMatch } from "../../write-path/preconditions.js";
import type { RestoredConfiguration, WriteContext } from "../../write-path/domain-events.js";
import type { Writes } from "../../write-path/unit-of-work.js";
import { refuseProtected } from "../environments/environment-guard.js";
import { FlagPresenter, flagTag, type PendingChecks } from "./flag-presenter.js";
import { flagState, refuseBoundBeyondOwn, target } from "./flag-writes.js";
import { flagRepository } from "./flag.repository.js";
import type { Flag } from "./flag.schemas.js";
import type { FlagStore } from "./flag.store.js";
import type { Transaction } from "kysely";
import type { Database } from "../../db/schema.js";

export const flagArchived = (name: string) =>
  new AppError(409, "flag_archived", `Flag "${name}" is archived: restore it first (POST …/flags/${name}/restore).`);

/**
 * Archiving and restoring a flag (docs/lifecycle.md): an archived flag is evaluated as not found in every
 * environment (the snapshot drops it, as it drops a deleted one), is left out of lists, keeps its
 * configurations, its history and its name, and comes back as it was when restored. Each is one write
 * with one event; both reach every environment, so they follow a flag's delete: a key bound to one
 * environment may only while there is no other, and protected environments need a project admin.
 */
export class FlagArchiver {
  private readonly presenter: FlagPresenter;

  constructor(
    private readonly work: Writes,
    checks: PendingChecks,
    private readonly clock: Clock,
    private readonly store: FlagStore = flagRepository,
  ) {
    this.presenter = new FlagPresenter(checks, clock, store);
  }

  /** The flag, checked as an archive or a restore must find it: in reach of the caller, with its ETag. */
  private async reach(
    trx: Transaction<Database>,
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    verb: "Archiving" | "Restoring",
    ifMatch: string | undefined,
  ): Promise<{ flag: Flag; environments: string[] }> {
    const environmentId = await this.store.resolveEnvironment(trx, projectId, scope.environment);
    const flag = await this.store.findFlag(trx, projectId, environmentId, name);
    if (!flag) throw flagNotFound(name);
    await refuseBoundBeyondOwn(this.store, trx, scope, projectId, environmentId, `${verb} flag "${name}"`);
    requireMatch(ifMatch, flagTag(flag), `Flag "${name}"`);
    const environments = (await this.store.listEnvironments(trx, projectId)).map((e) => e.id);
    await refuseProtected(this.store, trx, context, projectId, environments, `${verb} flag "${name}"`);
    return { flag, environments };
  }

  async archive(
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    ifMatch?: string,
  ): Promise<Flag> {
    const result = await this.work.write(context, projectId, async (trx) => {
      const { flag, environments } = await this.reach(trx, context, projectId, scope, name, "Archiving", ifMatch);
      if (flag.archived) {
        throw new AppError(409, "flag_archived", `Flag "${name}" is archived already.`);
      }
      // A flag another one depends on would turn that one off everywhere it names it: refused, as a
      // variant still served is (say which, so they can be changed first).
      const dependents: string[] = [];
      for (const environment of environments) {
        for (const other of await this.store.targetingIn(trx, projectId, environment)) {
          if (other.name !== name && other.prerequisites.some((p) => p.flag === name))
            dependents.push(`"${other.name}" in "${environment}"`);
        }
      }
      if (dependents.length > 0) {
        throw new AppError(
          409,
          "flag_in_use",
          `Flag "${name}" is a prerequisite of ${dependents.slice(0, 5).join(", ")}${dependents.length > 5 ? ` and ${dependents.length - 5} more` : ""}: remove it from their prerequisites first.`,
        );
      }
      const at = isoTime(this.clock.now());
      await this.store.saveArchived(trx, flag.id, at);
      const archived: Flag = { ...flag, archived: true, archivedAt: at };
      return {
        result: await this.presenter.presentOne(trx, archived, scope.ownOnly),
        events: [
          {
            type: "flag.archived",
            projectId,
            target: target(flag),
            before: { ...flagState(flag), archivedAt: null },
            after: { ...flagState(flag), archivedAt: at },
          },
        ],
      };
    });
    return result;
  }

  async restore(
    context: WriteContext,
    projectId: string,
    scope: EnvironmentScope,
    name: string,
    ifMatch?: string,
  ): Promise<Flag> {
    return this.work.write(context, projectId, async (trx) => {
      const { flag, environments } = await this.reach(trx, context, projectId, scope, name, "Restoring", ifMatch);
      if (!flag.archived) throw new AppError(409, "flag_not_archived", `Flag "${name}" is not archived.`);
      // Evaluation takes back every environment's configuration as it was kept.
      const configurations: RestoredConfiguration[] = [];
      for (const environment of environments) {
        const configured = await this.store.findFlag(trx, projectId, environment, name);
        if (!configured) continue;
        const links = await this.store.linksOf(trx, configured.configId);
        configurations.push({ environment, flag: flagState(configured), ...links });
      }
      await this.store.saveArchived(trx, flag.id, null);
      return {
        result: await this.presenter.presentOne(trx, { ...flag, archived: false, archivedAt: null }, scope.ownOnly),
        events: [
          {
            type: "flag.restored",
            projectId,
            target: target(flag),
            before: { ...flagState(flag), archivedAt: flag.archivedAt },
            after: { ...flagState(flag), archivedAt: null },
            unpublished: { configurations },
          },
        ],
      };
    });
  }
}
