import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import { AppError } from "../../errors.js";
import type { WriteContext } from "../history/domain-events.js";

/**
 * Refuses a change to what protected environments serve unless the caller is an admin of the project (a
 * project admin, an admin, an admin key, the service itself). The one place this is decided: every write
 * that changes a configuration calls it, inside its transaction, with the environment it changes; a write
 * that changes what several environments serve without naming them (deleting a flag, changing the value
 * of a variant their configurations serve, deleting a segment attached there) calls it with all of them,
 * and says what it does in `change`.
 */
export async function refuseProtected(
  db: Kysely<Database> | Transaction<Database>,
  context: WriteContext,
  projectId: string,
  environments: string | readonly string[],
  change?: string,
): Promise<void> {
  if (context.mayConfigureProtected) return;
  const ids = typeof environments === "string" ? [environments] : [...new Set(environments)];
  if (ids.length === 0) return;
  const rows = await db
    .selectFrom("environments")
    .select(["id", "protected"])
    .where("project_id", "=", projectId)
    .where("id", "in", ids)
    .orderBy("id")
    .execute();
  const guarded = rows.filter((row) => Number(row.protected) === 1).map((row) => `"${row.id}"`);
  if (guarded.length === 0) return;
  const named = guarded.length === 1 ? `environment ${guarded[0]}` : `environments ${guarded.join(", ")}`;
  throw new AppError(
    403,
    "environment_protected",
    change === undefined
      ? `Environment ${guarded[0]} is protected: only the project's admins change its configurations.`
      : `${change} changes what protected ${named} ${guarded.length === 1 ? "serves" : "serve"}: only the project's admins may.`,
  );
}
