// The keys' shapes are the API's contract, shared with the clients: @flagstaff/core/schemas.
export {
  type AnyApiKey as ApiKey,
  ApiKeySchema,
  type CreatedApiKey,
  CreatedApiKeySchema,
  CreateKeyBody,
  type CreateKeyInput,
  UpdateKeyBody,
  type UpdateKeyInput,
  WhoAmISchema,
} from "@flagstaff/core/schemas";
