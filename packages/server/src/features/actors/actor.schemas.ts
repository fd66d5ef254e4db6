// The actor's shapes are the API's contract, shared with the clients: @flagstaff/core/schemas.
export { type Actor, ActorSchema, PutActorBody, type PutActorInput } from "@flagstaff/core/schemas";
