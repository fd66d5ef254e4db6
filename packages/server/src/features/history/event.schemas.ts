import { EVENT_TYPE_FILTERS, SEGMENT_ID_MAX_LENGTH } from "@flagstaff/core";
import { oneOf } from "@flagstaff/core/schemas";
import { Type } from "typebox";
import { Limits, Timestamp } from "@flagstaff/core/schemas";
import { PageQuerySchema } from "../../kernel/schemas.js";

// The event's shape is the API's contract, shared with the clients: @flagstaff/core/schemas.
export { EventSchema } from "@flagstaff/core/schemas";

const TypeFilter = oneOf(EVENT_TYPE_FILTERS, {
  description: "An event type, or a prefix such as flag. for all of a kind",
});

const historyFilters = {
  type: Type.Optional(
    Type.Array(TypeFilter, { maxItems: 20, description: "Event types or prefixes, repeated (type=a&type=b)" }),
  ),
  since: Type.Optional({ ...Timestamp, description: "Events at or after this time" }),
  until: Type.Optional({ ...Timestamp, description: "Events strictly before this time" }),
  environment: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "Only events of this environment: its configurations' changes and its own events. A key bound to an environment never sees another's. Extension.",
    }),
  ),
  actor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "Only the changes of this person (usr_…) or key (key_…). Extension.",
    }),
  ),
};

export const ListEventsQuery = Type.Object(
  {
    ...PageQuerySchema,
    ...historyFilters,
    flag: Type.Optional({ ...Limits.flagName, description: "Events of flags of this name" }),
    segment: Type.Optional(
      Type.String({ minLength: 1, maxLength: SEGMENT_ID_MAX_LENGTH, description: "Events of this segment id" }),
    ),
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
  environment?: string;
  actor?: string;
}
