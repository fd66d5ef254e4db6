// The environment's shapes are the API's contract, shared with the clients: @flagstaff/core/schemas.
export {
  CreateEnvironmentBody,
  type CreateEnvironmentInput,
  type Environment,
  EnvironmentSchema,
  UpdateEnvironmentBody,
  type UpdateEnvironmentInput,
} from "@flagstaff/core/schemas";
