import type {
  ChangeRequestState,
  ReviewDecision,
  Condition,
  EVENT_TYPES as CONTRACT_EVENT_TYPES,
  FlagKind,
  FlagStatus,
  FlagTargeting,
  RolloutPlan,
  StaleReason,
  TargetKind,
} from "@flagstaff/core";
import type { Role } from "../access/principal.js";

// The target kinds are the API's contract, shared with the clients: @flagstaff/core.
export type { TargetKind } from "@flagstaff/core";

/**
 * Who made a write: a person (signed in, or with one of their keys), a service key (with its name as it
 * was then), or the service itself. Events stored before people existed lack `type`; the history adds it
 * when it reads them (see event.repository.ts).
 */
export type EventActor =
  | {
      readonly type: "user";
      readonly id: string;
      readonly email: string;
      readonly name: string;
      readonly via: "session" | "key";
      readonly keyId?: string;
      readonly keyName?: string;
    }
  | { readonly type: "key"; readonly keyId: string; readonly keyName: string; readonly role: Role }
  | { readonly type: "system"; readonly system: SystemActor };

/** The service's own writers: start-up, the admin-key command, the webhook dispatcher, single sign-on. */
type SystemActor = "startup" | "admin-key-command" | "webhook-dispatcher" | "sign-in" | "scheduler" | "stale-rules";

/** The caller and request a write is made for; routes build it from the request, system callers name themselves. */
export interface WriteContext {
  readonly actor: EventActor;
  readonly requestId: string | null;
  /**
   * Whether the caller may change configurations of protected environments (a project admin, an admin,
   * the service itself). Services that change a configuration check it; see environment-guard.ts.
   */
  readonly mayConfigureProtected: boolean;
  /**
   * The environment the caller's key is bound to; null: none (sessions, admin keys, keys bound to none,
   * the service itself). Services whose writes reach an environment given by data (a key's) refuse a
   * bound caller beyond its own: see mayReach in access/environment-scope.ts.
   */
  readonly boundTo: string | null;
  /** Why the write is made, in the caller's words (a flag's PATCH `comment`); recorded with its events. */
  readonly comment?: string;
  /**
   * The change request the write applies or acts on (its id): recorded with its events. A write that
   * applies one passes the environment's approval gate (see refuseUnapproved), its approvals having been
   * counted.
   */
  readonly changeRequest?: string;
}

const system = (name: SystemActor): WriteContext => ({
  actor: { type: "system", system: name },
  requestId: null,
  mayConfigureProtected: true,
  boundTo: null,
});
export const STARTUP = system("startup");
export const ADMIN_KEY_COMMAND = system("admin-key-command");
export const WEBHOOK_DISPATCHER = system("webhook-dispatcher");
/** Single sign-on adding a person at their first sign-in, or setting their role from the provider's claim. */
export const SIGN_IN = system("sign-in");
/** The job that applies scheduled change requests at their time. */
export const SCHEDULER = system("scheduler");
/** The job that finds stale flags (docs/lifecycle.md). */
export const STALE_RULES = system("stale-rules");

// What the history records of each kind of target, before and after a write (never a secret). Type
// aliases, not interfaces: a published event's states are plain JSON records.
export type ProjectRecord = { readonly id: string; readonly name: string };
export type KeyRecord = {
  readonly id: string;
  readonly name: string;
  readonly role: Role;
  /** The environment the key is bound to (absent in events recorded before environments). */
  readonly environment?: string | null;
  /** A personal key's person (absent for service keys). */
  readonly userId?: string;
};
/**
 * A flag as the history records it, with its targeting: the definition's type and variants, the
 * environment's variants served, rules and prerequisites (absent in events recorded before targeting).
 */
export type FlagRecord = {
  readonly name: string;
  readonly description: string;
  readonly status: FlagStatus;
  readonly percentageActors: number;
  readonly percentageCalls: number;
  /** The configuration's timed rollout plan (absent: none). */
  readonly rolloutPlan?: RolloutPlan;
  /** What the flag is for, and whether it is meant to stay (absent in events recorded before them). */
  readonly kind?: FlagKind;
  readonly permanent?: boolean;
} & Partial<FlagTargeting>;
/** A flag archived or restored: as it was, and when it was archived (null: it is not). */
export type ArchiveRecord = FlagRecord & { readonly archivedAt: string | null };
/** Why and since when a flag is stale (docs/lifecycle.md), with the rule's words. */
export type StaleRecord = { readonly reason: StaleReason; readonly since: string; readonly detail: string };
/** A restored flag's configuration in one environment, as evaluation puts it back. */
export type RestoredConfiguration = {
  readonly environment: string;
  readonly flag: FlagRecord;
  readonly actors: readonly string[];
  readonly segments: readonly string[];
};
/** A flag after an update: its fields, and the actors and segments the update attached and detached. */
export type FlagUpdate = FlagRecord & {
  readonly addedActors: readonly string[];
  readonly removedActors: readonly string[];
  readonly addedSegments: readonly string[];
  readonly removedSegments: readonly string[];
  /** Set when the update copied another environment's configuration (POST …/copy). */
  readonly copiedFrom?: string;
};
export type EnvironmentRecord = {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly default: boolean;
  /** Only project admins change its configurations (absent in events recorded before it: false). */
  readonly protected?: boolean;
  /** Approvals a change request needs there (absent in events recorded before change requests: 0). */
  readonly requiredApprovals?: number;
  readonly allowSelfApproval?: boolean;
  /** Its place in the project's order, from 1: in the records of an update that moved it only. */
  readonly position?: number;
};
/** A person as the history records them: never a password or its hash. */
export type UserRecord = {
  readonly email: string;
  readonly name: string;
  readonly role: "admin" | "member";
  readonly disabled: boolean;
  readonly hasPassword: boolean;
};
/** A person's grant on a project, as the history records it (the target names the person). */
export type AccessRecord = { readonly role: "admin" | "write" | "read" };
/** An environment as created: its record, and the environment its configurations were copied from. */
export type EnvironmentCreation = EnvironmentRecord & { readonly copyFrom: string | null };
export type SegmentRecord = {
  readonly name: string;
  readonly description: string;
  /** Rule-based membership (absent in events recorded before it). */
  readonly conditions?: readonly Condition[];
};
/** A segment after an update: its fields, and the members the update added and removed. */
export type SegmentUpdate = SegmentRecord & {
  readonly addedActors: readonly string[];
  readonly removedActors: readonly string[];
};
export type ActorProfile = { readonly name: string | null; readonly imageURL: string | null };
/** A webhook as the history records it: no secret, and the URL without its credentials, query and fragment. */
export type WebhookRecord = {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly description: string;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
};

/**
 * A change request as the history records it: its title, state, the flags it changes and when it is
 * scheduled; a review's decision, an override's reason, a failure's reason where the event is one.
 */
export type ChangeRequestRecord = {
  readonly title: string;
  readonly state: ChangeRequestState;
  readonly flags: readonly string[];
  readonly scheduledAt: string | null;
  readonly approvals: number;
  readonly review?: { readonly decision: ReviewDecision; readonly comment: string | null };
  readonly overrideReason?: string;
  readonly failureReason?: string;
};

/** One kind of event: its type, the kind of its target, and the shapes of its before and after. */
interface EventOf<Type extends string, Kind extends TargetKind, Before, After, Project = string> {
  readonly type: Type;
  /** null for admin keys, which belong to no project, and for `project.deleted` (kept apart from any project). */
  readonly projectId: Project;
  readonly target: { readonly kind: Kind; readonly id: string; readonly name: string };
  readonly before: Before;
  readonly after: After;
  /** The environment of a configuration's change or of an environment's event (published as `environment`). */
  readonly environment?: string;
}

/**
 * What a write did, as its work reports it: one member per event type. `unpublished` carries what the
 * write path needs from an event but the history and webhooks must never see (a key's hash): the unit of
 * work drops it before the event is stored or published.
 */
export type DomainEvent =
  | (EventOf<"project.created", "project", null, ProjectRecord> & {
      /** Its environments' ids, the first the default (the snapshot builds the project's states from them). */
      readonly unpublished: { readonly environments: readonly string[] };
    })
  | EventOf<"project.deleted", "project", ProjectRecord, null, null>
  | (EventOf<"key.created", "key", null, KeyRecord, string | null> & {
      readonly unpublished: { readonly keyHash: string };
    })
  | (EventOf<"key.updated", "key", KeyRecord, KeyRecord, string | null> & {
      /** The key's hash, for the snapshot, which holds keys by hash (the new name is the history's actor). */
      readonly unpublished: { readonly keyHash: string };
    })
  | EventOf<"key.revoked", "key", KeyRecord, null, string | null>
  | EventOf<"flag.created", "flag", null, FlagRecord>
  | EventOf<"flag.updated", "flag", FlagRecord, FlagUpdate>
  | EventOf<"flag.deleted", "flag", FlagRecord, null>
  | EventOf<"flag.archived", "flag", ArchiveRecord, ArchiveRecord>
  | (EventOf<"flag.restored", "flag", ArchiveRecord, ArchiveRecord> & {
      /** Its configuration in every environment, which evaluation takes back. */
      readonly unpublished: { readonly configurations: readonly RestoredConfiguration[] };
    })
  | EventOf<"flag.stale", "flag", null, StaleRecord>
  | EventOf<"segment.created", "segment", null, SegmentRecord>
  | EventOf<"segment.updated", "segment", SegmentRecord, SegmentUpdate>
  | EventOf<"segment.deleted", "segment", SegmentRecord, null>
  | EventOf<"actor.updated", "actor", ActorProfile | null, ActorProfile>
  | EventOf<"webhook.created", "webhook", null, WebhookRecord>
  | EventOf<"webhook.updated", "webhook", WebhookRecord, WebhookRecord>
  | EventOf<"webhook.deleted", "webhook", WebhookRecord, null>
  | EventOf<"environment.created", "environment", null, EnvironmentCreation>
  | EventOf<"environment.updated", "environment", EnvironmentRecord, EnvironmentRecord>
  | EventOf<"environment.deleted", "environment", EnvironmentRecord, null>
  // People belong to no project; their events are kept apart from every project's history, as admin keys'.
  | EventOf<"user.created", "user", null, UserRecord, null>
  | EventOf<"user.updated", "user", UserRecord, UserRecord, null>
  | EventOf<"user.deleted", "user", UserRecord, null, null>
  | EventOf<"access.granted", "access", AccessRecord | null, AccessRecord>
  | EventOf<"access.revoked", "access", AccessRecord, null>
  | EventOf<"change_request.created", "change_request", null, ChangeRequestRecord>
  | EventOf<ChangeRequestEventType, "change_request", ChangeRequestRecord, ChangeRequestRecord>;

/** The events of a change request's life after its creation. */
export type ChangeRequestEventType =
  | "change_request.updated"
  | "change_request.reviewed"
  | "change_request.applied"
  | "change_request.overridden"
  | "change_request.cancelled"
  | "change_request.conflict"
  | "change_request.failed";

export type EventType = DomainEvent["type"];

/** One event type's member of DomainEvent. */
export type EventOfType<T extends EventType> = Extract<DomainEvent, { type: T }>;

/** Every kind of event a write can produce (the contract's list); the history filters by these and by their prefixes. */
export { EVENT_TYPES } from "@flagstaff/core";
// Compile-time check that the contract's list and this union name the same types, both ways.
type ContractTypes = (typeof CONTRACT_EVENT_TYPES)[number];
const sameTypes: [Exclude<EventType, ContractTypes>, Exclude<ContractTypes, EventType>] extends [never, never]
  ? true
  : never = true;
void sameTypes;

/** An event as stored in the history and published on the bus and to webhooks (never `unpublished`). */
export interface StoredEvent {
  readonly id: string;
  readonly type: EventType;
  readonly projectId: string | null;
  readonly environment?: string;
  readonly target: { readonly kind: TargetKind; readonly id: string; readonly name: string };
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
  readonly createdAt: string;
  readonly actor: EventActor;
  readonly requestId: string | null;
  /** Why the write was made, when its caller said (absent otherwise). */
  readonly comment?: string;
  /** The change request the write applied or acted on (absent otherwise). */
  readonly changeRequest?: string;
}

/**
 * The published form of a reported event, as the history stores it and webhooks send it: the fields in
 * this order (a webhook body is this object serialised), and nothing of `unpublished`.
 */
export function publishedEvent(
  event: DomainEvent,
  stored: { readonly id: string; readonly createdAt: string; readonly context: WriteContext },
): StoredEvent {
  return {
    id: stored.id,
    type: event.type,
    projectId: event.projectId,
    ...(event.environment === undefined ? {} : { environment: event.environment }),
    target: event.target,
    before: event.before,
    after: event.after,
    createdAt: stored.createdAt,
    actor: stored.context.actor,
    requestId: stored.context.requestId,
    ...(stored.context.comment === undefined ? {} : { comment: stored.context.comment }),
    ...(stored.context.changeRequest === undefined ? {} : { changeRequest: stored.context.changeRequest }),
  };
}

/** A key's fields the history records. */
export type KeyFields = { id: string; name: string; role: Role; environment: string | null };

/** A key's state as the history records it: id, name, role and environment, never the secret or its hash. */
export const keyState = (key: KeyFields): KeyRecord => ({
  id: key.id,
  name: key.name,
  role: key.role,
  environment: key.environment,
});

/** A key's revocation: by its own route, with its environment, or with its person. */
export const keyRevoked = (projectId: string | null, key: KeyFields): DomainEvent => ({
  type: "key.revoked",
  projectId,
  target: { kind: "key", id: key.id, name: key.name },
  before: keyState(key),
  after: null,
});
