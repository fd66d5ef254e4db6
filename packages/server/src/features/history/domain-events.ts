import type { EventType, TargetKind } from "@flagstaff/core";
import type { Role } from "../evaluation/changes.js";

// The event types and target kinds are the API's contract, shared with the clients: @flagstaff/core.
export { EVENT_TYPES, type EventType, type TargetKind } from "@flagstaff/core";

/** Who made a write: a key (with its name as it was then), or the service itself. */
export type EventActor =
  | { readonly keyId: string; readonly keyName: string; readonly role: Role }
  | { readonly system: "startup" | "admin-key-command" | "webhook-dispatcher" };

/** The caller and request a write is made for; routes build it from the request, system callers name themselves. */
export interface WriteContext {
  readonly actor: EventActor;
  readonly requestId: string | null;
}

export const STARTUP: WriteContext = { actor: { system: "startup" }, requestId: null };
export const ADMIN_KEY_COMMAND: WriteContext = { actor: { system: "admin-key-command" }, requestId: null };
export const WEBHOOK_DISPATCHER: WriteContext = { actor: { system: "webhook-dispatcher" }, requestId: null };

/** What a write did, as its work reports it: the target, and its state before and after (never a secret). */
export interface DomainEvent {
  readonly type: EventType;
  /** null for admin keys, which belong to no project. */
  readonly projectId: string | null;
  readonly target: { readonly kind: TargetKind; readonly id: string; readonly name: string };
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
}

/** An event as stored in the history and published on the bus. */
export interface StoredEvent extends DomainEvent {
  readonly id: string;
  readonly createdAt: string;
  readonly actor: EventActor;
  readonly requestId: string | null;
}
