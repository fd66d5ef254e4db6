// The API's contract without a schema library: identifier rules, limits and closed sets of words. The
// TypeBox schemas of the API's shapes (`@flagstaff/core/schemas`) are built from these.
export * from "./enums.js";
export * from "./ids.js";
export * from "./limits.js";
export * from "./query-attributes.js";
