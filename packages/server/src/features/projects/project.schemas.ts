// The project's shapes are the API's contract, shared with the clients: @flagstaff/core/schemas.
export { CreateProjectBody, type CreateProjectInput, type Project, ProjectSchema } from "@flagstaff/core/schemas";
