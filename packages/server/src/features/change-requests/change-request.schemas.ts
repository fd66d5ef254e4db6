// The change requests' shapes are the API's contract, shared with the clients: @flagstaff/core/schemas.
export {
  ApplyChangeRequestBody,
  ChangeRequestSchema,
  ChangeRequestStateSchema,
  CreateChangeRequestBody,
  ReviewBody,
  ScheduleEntrySchema,
  UpdateChangeRequestBody,
} from "@flagstaff/core/schemas";
