import type { KeyRole } from "@flagstaff/core";

// The caller as plain values: who makes a request (decided by the HTTP shell's authentication, from a
// key, a stream token or a session), what their roles allow on a project (roles.ts), and which
// environments they reach (environment-scope.ts). Services and the read model receive these; none of
// this reads a request.

/** Roles a key can hold; admin keys belong to no project. */
export type Role = KeyRole;

/**
 * Who a request is made by: a key (a service key, or a person's personal key), or a person's session.
 * For a person, `role`, `projectId` and `environment` bound what they may do; the person's own role and
 * grants (in `Snapshot.people`) bound it further, at every request (see roles.ts).
 */
export interface Principal {
  /** The key's id; for a session, `ses_` and a digest of its id (rate limits and stream caps count per session). */
  readonly keyId: string;
  /** The key's name, recorded with each write it makes (a session: the person's name). */
  readonly keyName: string;
  /** A key's role; for a session, admin (the person's own role and grants are what bound it). */
  readonly role: Role;
  /** null for admin keys, sessions and personal keys of no project. */
  readonly projectId: string | null;
  /** The environment the key is bound to; null: none (admin keys, unbound write keys). */
  readonly environment: string | null;
  /** The person behind a session or a personal key; absent for service keys. */
  readonly userId?: string;
  /** How a person is signed in; absent for service keys. */
  readonly via?: "session" | "key";
  /**
   * A session's id as the database keys it (its SHA-256; never the id itself): what its streams are
   * checked against (Sessions.live). Sessions only.
   */
  readonly session?: string;
}

/** What ended: one session (by the hash of its id, as the database keys it), or every session of a person. */
export type EndedSessions = { readonly session: string } | { readonly userId: string };
