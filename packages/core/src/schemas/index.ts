// The API's shapes as TypeBox schemas: the server's routes validate and serialise with them (and publish
// them in /openapi.json), and the SDK's types are their Static types. Built on ../contract.
export * from "./actors.js";
export * from "./common.js";
export * from "./environments.js";
export * from "./events.js";
export * from "./flags.js";
export * from "./keys.js";
export * from "./projects.js";
export * from "./segments.js";
export * from "./webhooks.js";
export * from "./targeting.js";
export * from "./people.js";
export * from "./ofrep.js";
export * from "./change-requests.js";
export * from "./usage.js";
export * from "./project-document.js";
