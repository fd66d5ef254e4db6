import type { Segment as SegmentShape } from "@flagstaff/core/schemas";
import { Type } from "typebox";

// The segment's shapes are the API's contract, shared with the clients: @flagstaff/core/schemas.
export {
  CreateSegmentBody,
  type CreateSegmentInput,
  SegmentSchema,
  UpdateSegmentBody,
  type UpdateSegmentInput,
} from "@flagstaff/core/schemas";

/** A segment as the API shows it, plus the revision its ETag is made of (not serialised). */
export type Segment = SegmentShape & { revision: number };

export const SegmentParams = Type.Object({ projectId: Type.String(), segmentId: Type.String() });
