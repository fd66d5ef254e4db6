import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import { AppError } from "../../kernel/errors.js";
import type { WriteContext } from "../../write-path/domain-events.js";
import type { EnvironmentReads } from "./environment.store.js";

/**
 * Refuses a change to what protected environments serve unless the caller is an admin of the project (a
 * project admin, an admin, an admin key, the service itself). The one place this is decided: every write
 * that changes a configuration calls it, inside its transaction, with the environment it changes; a write
 * that changes what several environments serve without naming them (deleting a flag, changing the value
 * of a variant their configurations serve, deleting a segment attached there) calls it with all of them,
 * and says what it does in `change`. It reads which are protected from `environments` (the caller's store).
 */
export async function refuseProtected(
  environments: Pick<EnvironmentReads, "protectedAmong">,
  db: Kysely<Database> | Transaction<Database>,
  context: WriteContext,
  projectId: string,
  ids: string | readonly string[],
  change?: string,
): Promise<void> {
  if (context.mayConfigureProtected) return;
  const named = typeof ids === "string" ? [ids] : [...new Set(ids)];
  const guarded = (await environments.protectedAmong(db, projectId, named)).map((id) => `"${id}"`);
  if (guarded.length === 0) return;
  const which = guarded.length === 1 ? `environment ${guarded[0]}` : `environments ${guarded.join(", ")}`;
  throw new AppError(
    403,
    "environment_protected",
    change === undefined
      ? `Environment ${guarded[0]} is protected: only the project's admins change its configurations.`
      : `${change} changes what protected ${which} ${guarded.length === 1 ? "serves" : "serve"}: only the project's admins may.`,
  );
}

/**
 * Refuses a direct change to a flag's configuration in an environment that requires approvals (409
 * approval_required): there, changes go through a change request (docs/change-requests.md), and a write
 * that applies one (`context.changeRequest`) passes. Nobody is exempt, not even an admin: an emergency
 * goes through a request applied with an override, which the history and webhooks name as such.
 */
export async function refuseUnapproved(
  environments: Pick<EnvironmentReads, "requiredApprovals">,
  db: Kysely<Database> | Transaction<Database>,
  context: WriteContext,
  projectId: string,
  environment: string,
): Promise<void> {
  if (context.changeRequest !== undefined) return;
  const required = await environments.requiredApprovals(db, projectId, environment);
  if (required === 0) return;
  throw new AppError(
    409,
    "approval_required",
    `Environment "${environment}" requires ${required} approval${required === 1 ? "" : "s"} for changes to flags: open a change request (POST /projects/${projectId}/change-requests) with this change instead.`,
  );
}
