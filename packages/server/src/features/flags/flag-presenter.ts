import type { Kysely, Transaction } from "kysely";
import { planStanding } from "@flagstaff/core";
import type { RolloutPlanView } from "@flagstaff/core/schemas";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { entityTag } from "../../write-path/preconditions.js";
import { flagRepository } from "./flag.repository.js";
import type { Flag } from "./flag.schemas.js";
import type { FlagStore } from "./flag.store.js";

/** A flag's ETag: of its configuration in the environment it is shown in (which its definition is part of). */
export const flagTag = (flag: Pick<Flag, "configId" | "revision">) => entityTag(flag.configId, flag.revision);

/**
 * The checks noted on this instance and not yet written (latestCheckedAt is coalesced: the read model's
 * CheckRecorder is one): what a flag is answered with, and what a deleted flag's pending check is.
 */
export interface PendingChecks {
  /** When a flag was last checked in an environment, noted but not yet flushed (ms since the epoch). */
  pendingFor(environment: string, flagId: string): number | undefined;
  /** Drops a deleted flag's pending checks. */
  forget(flagId: string): void;
}

/** Flags as answered, by every route that answers flags (the service's, the copy's, the engine's listings). */
export class FlagPresenter {
  constructor(
    private readonly checks: PendingChecks,
    private readonly clock: Clock,
    private readonly store: Pick<FlagStore, "configurationsOf"> = flagRepository,
  ) {}

  /** A flag's timed rollout as answered: its steps, and where it stands now (core's planStanding). */
  private withPlan(flag: Flag): Flag {
    const plan = flag.plan;
    if (plan === null) return flag;
    const standing = planStanding(plan, flag.percentageActors, this.clock.now());
    const rolloutPlan: RolloutPlanView = {
      steps: plan.steps as RolloutPlanView["steps"],
      paused: plan.pausedAt !== undefined && plan.pausedAt !== null,
      pausedAt: plan.pausedAt ?? null,
      current: standing.current,
      percentageActors: standing.percentageActors,
      nextAt: standing.nextAt === null ? null : isoTime(standing.nextAt),
    };
    return { ...flag, rolloutPlan };
  }

  /** A flag as answered: with a check noted on this instance but not yet flushed. */
  private withPendingCheck(flag: Flag): Flag {
    const pending = this.checks.pendingFor(flag.environment, flag.id);
    if (pending === undefined) return flag;
    const at = isoTime(pending);
    return flag.latestCheckedAt === null || flag.latestCheckedAt < at ? { ...flag, latestCheckedAt: at } : flag;
  }

  /**
   * Flags as answered: each with its pending check and its configuration in every environment (only in
   * its own for a key bound to one).
   */
  async present(db: Kysely<Database> | Transaction<Database>, flags: Flag[], ownOnly: boolean): Promise<Flag[]> {
    const configurations = await this.store.configurationsOf(
      db,
      flags.map((f) => f.id),
    );
    return flags.map((f) => {
      const all = configurations.get(f.id) ?? {};
      const own = all[f.environment];
      const environments = ownOnly ? (own ? { [f.environment]: own } : {}) : all;
      return { ...this.withPlan(this.withPendingCheck(f)), environments };
    });
  }

  async presentOne(db: Kysely<Database> | Transaction<Database>, flag: Flag, ownOnly: boolean): Promise<Flag> {
    return (await this.present(db, [flag], ownOnly))[0] as Flag;
  }
}
