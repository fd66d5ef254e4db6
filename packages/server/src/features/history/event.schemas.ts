import { Type } from "typebox";
import { Limits, PageQuerySchema, Timestamp } from "../../http/schemas.js";
import { EVENT_TYPES } from "./domain-events.js";

const KINDS = ["project", "key", "flag", "segment", "actor", "webhook"] as const;

/** A type filter: an event type, or a prefix such as `flag.` for every type of a kind. */
export const TYPE_FILTERS = [...EVENT_TYPES, ...KINDS.map((k) => `${k}.`)] as const;

const State = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]);

export const EventSchema = Type.Object(
  {
    id: Type.String({ description: "evt_ and a ULID: ids sort by time" }),
    type: Type.Union(EVENT_TYPES.map((t) => Type.Literal(t))),
    projectId: Type.String(),
    createdAt: Timestamp,
    actor: Type.Union(
      [
        Type.Object({
          keyId: Type.String(),
          keyName: Type.String(),
          role: Type.Union(["admin", "write", "read", "check"].map((r) => Type.Literal(r))),
        }),
        Type.Object({ system: Type.String({ description: "startup, admin-key-command or webhook-dispatcher" }) }),
      ],
      { description: "The key that made the write (with its name then), or the service itself" },
    ),
    target: Type.Object({
      kind: Type.Union(KINDS.map((k) => Type.Literal(k))),
      id: Type.String(),
      name: Type.String({ description: "Flag, segment, key or project name; the actor id for actors" }),
    }),
    before: { ...State, description: "The target's state before the write; null for a create" },
    after: {
      ...State,
      description: "The target's state after the write; null for a delete. Updates add the ids added and removed",
    },
    requestId: Type.Union([Type.String(), Type.Null()], {
      description: "The X-Request-Id of the request that made the write; null for the service's own writes",
    }),
  },
  { $id: "Event" },
);

const TypeFilter = Type.Union(
  TYPE_FILTERS.map((t) => Type.Literal(t)),
  { description: "An event type, or a prefix such as flag. for all of a kind" },
);

const historyFilters = {
  type: Type.Optional(
    Type.Array(TypeFilter, { maxItems: 20, description: "Event types or prefixes, repeated (type=a&type=b)" }),
  ),
  since: Type.Optional({ ...Timestamp, description: "Events at or after this time" }),
  until: Type.Optional({ ...Timestamp, description: "Events strictly before this time" }),
};

export const ListEventsQuery = Type.Object(
  {
    ...PageQuerySchema,
    ...historyFilters,
    flag: Type.Optional({ ...Limits.flagName, description: "Events of flags of this name" }),
    segment: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Events of this segment id" })),
  },
  { additionalProperties: false },
);

export const ListFlagEventsQuery = Type.Object(
  { ...PageQuerySchema, ...historyFilters },
  { additionalProperties: false },
);

export interface HistoryQuery {
  type?: string[];
  flag?: string;
  segment?: string;
  since?: string;
  until?: string;
}
