import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import { AppError } from "../../errors.js";
import type { WriteContext } from "../history/domain-events.js";

/**
 * Refuses a change to a configuration of a protected environment unless the caller is an admin of the
 * project (a project admin, an admin, an admin key, the service itself). The one place this is decided:
 * every write that changes a configuration calls it, inside its transaction.
 */
export async function refuseProtected(
  db: Kysely<Database> | Transaction<Database>,
  context: WriteContext,
  projectId: string,
  environment: string,
): Promise<void> {
  if (context.mayConfigureProtected) return;
  const row = await db
    .selectFrom("environments")
    .select("protected")
    .where("project_id", "=", projectId)
    .where("id", "=", environment)
    .executeTakeFirst();
  if (row && Number(row.protected) === 1) {
    throw new AppError(
      403,
      "environment_protected",
      `Environment "${environment}" is protected: only the project's admins change its configurations.`,
    );
  }
}
