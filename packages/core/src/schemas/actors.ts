import { type Static, Type } from "typebox";
import { Timestamp } from "./common.js";

export const ActorSchema = Type.Object(
  {
    actorId: Type.String(),
    imageURL: Type.Union([Type.String(), Type.Null()]),
    name: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp,
  },
  { $id: "Actor", description: "An actor: anything identified by a free-form actorId, typically a user" },
);
/** Anything identified by a free-form actor id, typically a user. */
export type Actor = Static<typeof ActorSchema>;

export const PutActorBody = Type.Object(
  {
    name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()])),
    imageURL: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 2048, pattern: "^https?://[^\\s]+$", description: "an http(s) URL" }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);
/** Body of a PUT of an actor: it replaces the profile, so a field left out becomes null. */
export type PutActorInput = Static<typeof PutActorBody>;
