import type { GrantRole, ProjectChange, UserRole } from "@flagstaff/core";
import type { Role } from "../access/principal.js";

/** The stream that carries changes not tied to one project (admin keys, people and their grants, personal keys). */
export const GLOBAL_STREAM = "";

/**
 * What a committed write did to evaluation state. Each write transaction records a list of these under
 * the next version of its stream; every instance replays them, in version order, into its snapshot.
 */
export type Change =
  | {
      readonly kind: "project.created";
      readonly projectId: string;
      /** Its environments, the first the default; absent in change sets logged before environments: production. */
      readonly environments?: readonly string[];
    }
  | {
      readonly kind: "environment.created";
      readonly projectId: string;
      readonly environment: string;
      /** The environment whose flag configurations it starts with; absent: every flag disabled. */
      readonly copyFrom?: string;
    }
  | { readonly kind: "environment.deleted"; readonly projectId: string; readonly environment: string }
  /** The project's default environment moved to this one. */
  | { readonly kind: "environment.default"; readonly projectId: string; readonly environment: string }
  | { readonly kind: "project.deleted"; readonly projectId: string }
  | {
      readonly kind: "key.created";
      readonly id: string;
      /** The key's name, for the history's actor; absent in change sets logged before it was carried. */
      readonly name?: string;
      readonly hash: string;
      readonly role: Role;
      readonly projectId: string | null;
      /** The environment the key is bound to; absent in change sets logged before environments. */
      readonly environment?: string | null;
      /** A personal key's person; absent for service keys. */
      readonly userId?: string;
    }
  | { readonly kind: "key.deleted"; readonly id: string }
  // People and grants ride the global stream only: a project's stream is sent to SDKs, which must never
  // learn who works on the project.
  | {
      readonly kind: "user.put";
      readonly id: string;
      readonly email: string;
      readonly name: string;
      readonly role: UserRole;
      readonly disabled: boolean;
    }
  | { readonly kind: "user.deleted"; readonly id: string }
  | { readonly kind: "grant.put"; readonly userId: string; readonly grantProject: string; readonly role: GrantRole }
  | { readonly kind: "grant.deleted"; readonly userId: string; readonly grantProject: string }
  // A project's evaluation changes: the form @flagstaff/core applies (and the stream sends), plus the
  // project and the environment they belong to. A flag change without an environment is one of every
  // environment (a new flag starts disabled in all; a deleted one leaves all); segment changes are the
  // project's, and so of every environment.
  | (ProjectChange & { readonly projectId: string; readonly environment?: string });

/** The environment every change set logged before environments existed belongs to. */
export { DEFAULT_ENVIRONMENT_ID as FIRST_ENVIRONMENT } from "@flagstaff/core";

/** A committed write as the feed carries it. */
export interface ChangeSet {
  readonly stream: string;
  readonly version: number;
  readonly changes: readonly Change[];
  /** When the writing instance committed it (ms since the epoch), for the change-feed lag metric. */
  readonly at?: number;
  /** The writing instance, so an instance can tell its own changes when they are announced back. */
  readonly origin?: string;
}
