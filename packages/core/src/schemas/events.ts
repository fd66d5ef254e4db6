import { type Static, Type } from "typebox";
import { EVENT_TYPES, KEY_ROLES, TARGET_KINDS } from "../contract/enums.js";
import { oneOf, Timestamp } from "./common.js";

const State = Type.Unsafe<Record<string, unknown> | null>(
  Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
);

export const EventSchema = Type.Object(
  {
    id: Type.String({ description: "evt_ and a ULID: ids sort by time" }),
    type: oneOf(EVENT_TYPES),
    projectId: Type.String(),
    environment: Type.Optional(
      Type.String({
        description:
          "The environment of a configuration's change (flag.updated) or of an environment's event; absent for the rest. Extension.",
      }),
    ),
    createdAt: Timestamp,
    actor: Type.Union(
      [
        Type.Object({
          type: Type.Literal("user"),
          id: Type.String(),
          email: Type.String({ description: "As it was then" }),
          name: Type.String({ description: "As it was then" }),
          via: Type.Union([Type.Literal("session"), Type.Literal("key")], {
            description: "Signed in to the console, or with one of the person's keys",
          }),
          keyId: Type.Optional(Type.String()),
          keyName: Type.Optional(Type.String()),
        }),
        Type.Object({
          type: Type.Literal("key"),
          keyId: Type.String(),
          keyName: Type.String(),
          role: oneOf(KEY_ROLES),
        }),
        Type.Object({
          type: Type.Literal("system"),
          system: Type.String({
            description:
              "startup, admin-key-command, webhook-dispatcher, sign-in (single sign-on adding a person), scheduler (scheduled changes) or stale-rules (a flag found stale)",
          }),
        }),
      ],
      { description: "The person, the service key (with its name then) or the service itself that made the write" },
    ),
    target: Type.Object({
      kind: oneOf(TARGET_KINDS),
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
    comment: Type.Optional(
      Type.String({
        description:
          "Why the write was made, as its caller said (a flag's PATCH `comment`); absent without one. Extension.",
      }),
    ),
    changeRequest: Type.Optional(
      Type.String({
        description:
          "The change request the write applied (its id): the flag events of an applied request, and the request's own events. Extension.",
      }),
    ),
  },
  { $id: "Event" },
);
/** One entry of a project's history: who changed what, when, and from what. */
export type FlagstaffEvent = Static<typeof EventSchema>;
/** Who made a write: a key (with its name then), or the service itself. */
export type EventActor = FlagstaffEvent["actor"];
