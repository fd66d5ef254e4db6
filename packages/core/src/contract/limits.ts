// The API's limits, one home each: the server's schemas, its fast paths and the clients read them here.

/** The most actor ids one evaluation takes (check, explain, OFREP). */
export const MAX_ACTORS = 100;

/** The longest actor id, in characters (code points). */
export const ACTOR_ID_MAX_LENGTH = 256;

/** The most ids one write adds or removes (a flag's actors and segments, a segment's members). */
export const MAX_ID_LIST = 1000;

/** The longest name of a project or key, and of a segment after trimming. */
export const NAME_MAX_LENGTH = 128;

/** The longest description of a flag, segment or webhook. */
export const DESCRIPTION_MAX_LENGTH = 1024;

/** The most seconds a check's answer may be cached for (`cache`). */
export const MAX_CACHE_SECONDS = 86400;

/** The most environments a project may have unless ENVIRONMENTS_MAX_PER_PROJECT says otherwise. */
export const DEFAULT_MAX_ENVIRONMENTS = 20;
