import type { Kysely, Transaction } from "kysely";
import type { ActorsTable, Database } from "../../db/schema.js";
import type { Actor } from "./actor.schemas.js";

type Executor = Kysely<Database> | Transaction<Database>;

export const toActor = (row: Pick<ActorsTable, "actor_id" | "name" | "image_url" | "created_at">): Actor => ({
  actorId: row.actor_id,
  name: row.name,
  imageURL: row.image_url,
  createdAt: row.created_at,
});

/** Brings actors into being the first time they are attached or added; existing ones are left as they are. */
export async function ensureActors(
  trx: Transaction<Database>,
  projectId: string,
  actorIds: readonly string[],
  at: string,
) {
  if (actorIds.length === 0) return;
  await trx
    .insertInto("actors")
    .values(
      actorIds.map((actor_id) => ({ project_id: projectId, actor_id, name: null, image_url: null, created_at: at })),
    )
    .onConflict((oc) => oc.columns(["project_id", "actor_id"]).doNothing())
    .execute();
}

export async function findActor(db: Executor, projectId: string, actorId: string): Promise<Actor | undefined> {
  const row = await db
    .selectFrom("actors")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("actor_id", "=", actorId)
    .executeTakeFirst();
  return row && toActor(row);
}

export async function insertActor(trx: Transaction<Database>, projectId: string, actor: Actor): Promise<void> {
  await trx
    .insertInto("actors")
    .values({
      project_id: projectId,
      actor_id: actor.actorId,
      name: actor.name,
      image_url: actor.imageURL,
      created_at: actor.createdAt,
    })
    .execute();
}

export async function updateActorProfile(
  trx: Transaction<Database>,
  projectId: string,
  actorId: string,
  profile: { name: string | null; imageURL: string | null },
): Promise<void> {
  await trx
    .updateTable("actors")
    .set({ name: profile.name, image_url: profile.imageURL })
    .where("project_id", "=", projectId)
    .where("actor_id", "=", actorId)
    .execute();
}
