import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import type { Database } from "../../db/schema.js";
import { AppError, projectNotFound } from "../../kernel/errors.js";
import type { ActorProfile, DomainEvent, WriteContext } from "../../write-path/domain-events.js";
import type { UnitOfWork } from "../../write-path/unit-of-work.js";
import { findProject } from "../projects/project.repository.js";
import * as repo from "./actor.repository.js";
import type { Actor, PutActorInput } from "./actor.schemas.js";

export class ActorService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  async get(projectId: string, actorId: string): Promise<Actor> {
    const actor = await repo.findActor(this.db, projectId, actorId);
    if (actor) return actor;
    if (!(await findProject(this.db, projectId))) throw projectNotFound(projectId);
    throw new AppError(
      404,
      "actor_not_found",
      `Actor "${actorId}" has never been attached to a flag or added to a segment.`,
    );
  }

  /** Creates or replaces an actor's profile; fields left out are cleared. Answers whether it was created. */
  async put(
    context: WriteContext,
    projectId: string,
    actorId: string,
    input: PutActorInput,
  ): Promise<{ actor: Actor; created: boolean }> {
    const profile: ActorProfile = { name: input.name ?? null, imageURL: input.imageURL ?? null };
    const event = (before: ActorProfile | null): DomainEvent => ({
      type: "actor.updated",
      projectId,
      target: { kind: "actor", id: actorId, name: actorId },
      before,
      after: profile,
    });
    return this.work.write<{ actor: Actor; created: boolean }>(context, projectId, async (trx) => {
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const existing = await repo.findActor(trx, projectId, actorId);
      if (existing) {
        const before = { name: existing.name, imageURL: existing.imageURL };
        const same = before.name === profile.name && before.imageURL === profile.imageURL;
        if (!same) await repo.updateActorProfile(trx, projectId, actorId, profile);
        return { result: { actor: { ...existing, ...profile }, created: false }, events: same ? [] : [event(before)] };
      }
      const actor: Actor = { actorId, ...profile, createdAt: isoTime(this.clock.now()) };
      await repo.insertActor(trx, projectId, actor);
      return { result: { actor, created: true }, events: [event(null)] };
    });
  }
}
