import type { Kysely } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
import type { Database } from "../../db/schema.js";
import { AppError, projectNotFound } from "../../errors.js";
import type { ChangeFeed } from "../evaluation/change-feed.js";
import { findProject } from "../projects/project.repository.js";
import * as repo from "./actor.repository.js";
import type { Actor, PutActorInput } from "./actor.schemas.js";

export class ActorService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly feed: ChangeFeed,
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
  async put(projectId: string, actorId: string, input: PutActorInput): Promise<{ actor: Actor; created: boolean }> {
    const profile = { name: input.name ?? null, imageURL: input.imageURL ?? null };
    return this.feed.write<{ actor: Actor; created: boolean }>(projectId, async (trx) => {
      if (!(await findProject(trx, projectId))) throw projectNotFound(projectId);
      const existing = await repo.findActor(trx, projectId, actorId);
      if (existing) {
        await repo.updateActorProfile(trx, projectId, actorId, profile);
        return { result: { actor: { ...existing, ...profile }, created: false }, changes: [] };
      }
      const actor: Actor = { actorId, ...profile, createdAt: isoTime(this.clock.now()) };
      await repo.insertActor(trx, projectId, actor);
      return { result: { actor, created: true }, changes: [] };
    });
  }
}
