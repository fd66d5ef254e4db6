import { ACTOR_ID_MAX_LENGTH, ATTRIBUTE_NAME_MAX_LENGTH, TARGETING_KEY_MAX_LENGTH } from "./limits.js";

// The identifier rules of the API, as JSON Schema patterns (the server's schemas and /openapi.json use the
// text) and as tests for clients that check before they ask. docs/api.md, Limits, says the same in prose.

/** The characters of a project id, as a regular expression's character class (without the brackets). */
export const PROJECT_ID_CHARACTERS = "A-Za-z0-9._-";
export const PROJECT_ID_MAX_LENGTH = 64;
/** A project id: 1–64 of A–Z a–z 0–9 . _ -, other than `.` and `..` (clients resolve those as path steps). */
export const PROJECT_ID_PATTERN = `^(?!\\.{1,2}$)[${PROJECT_ID_CHARACTERS}]{1,${PROJECT_ID_MAX_LENGTH}}$`;

/** An environment id follows the project id's rules: 1–64 of A–Z a–z 0–9 . _ -, other than `.` and `..`. */
export const ENVIRONMENT_ID_PATTERN = PROJECT_ID_PATTERN;
/** The environment every project starts with, and the one existing data moved into. */
export const DEFAULT_ENVIRONMENT_ID = "production";
export const DEFAULT_ENVIRONMENT_NAME = "Production";

/** The characters of a flag name, as a regular expression's character class (without the brackets). */
export const FLAG_NAME_CHARACTERS = "A-Za-z0-9._:-";
export const FLAG_NAME_MAX_LENGTH = 128;
/** A flag name: 1–128 of A–Z a–z 0–9 . _ - :, starting with a letter or digit. */
export const FLAG_NAME_PATTERN = `^[A-Za-z0-9][${FLAG_NAME_CHARACTERS}]{0,${FLAG_NAME_MAX_LENGTH - 1}}$`;

/**
 * An actor id: 1–256 characters (code points), no control characters (Unicode's Cc: C0, DEL and C1), other
 * than `.` and `..`. The control characters are spelled out rather than written \P{Cc}, which needs the u
 * flag: Ajv sets it, but Swagger UI's "Try it out" does not, and refused every id.
 */
export const ACTOR_ID_PATTERN = "^(?!\\.{1,2}$)[^\\u0000-\\u001F\\u007F-\\u009F]+$";

/** A segment id as a reference (flags' addSegments, the history's segment filter): 1–128 characters. */
export const SEGMENT_ID_MAX_LENGTH = 128;

/** A variant key or a rule id: 1–64 of A–Z a–z 0–9 . _ -, starting with a letter or digit (no ":"). */
export const TARGETING_KEY_PATTERN = `^[A-Za-z0-9][A-Za-z0-9._-]{0,${TARGETING_KEY_MAX_LENGTH - 1}}$`;

/** The attribute that is always the evaluation time; every other name starting with "$" is reserved. */
export const NOW_ATTRIBUTE = "$now";

/**
 * A context attribute's name as a condition or a split names it: 1–128 characters, no control characters,
 * not starting with "$" (reserved for names the engine defines) unless it is `$now`.
 */
export const ATTRIBUTE_NAME_PATTERN =
  "^(?:\\$now|[^$\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*)$";

/** An e-mail address's shortest and longest (RFC 5321's longest path, 254), in characters (code points). */
export const EMAIL_MIN_LENGTH = 3;
export const EMAIL_MAX_LENGTH = 254;
/**
 * An e-mail address, as a person's is accepted: one "@" with text on both sides, and no white space or
 * control characters anywhere. Deliberately loose about the rest (quoted local parts, internationalised
 * addresses): the identity provider, or the admin, knows the address; Flagstaff only keys people by it.
 */
export const EMAIL_PATTERN = "^[^@\\s\\u0000-\\u001F\\u007F-\\u009F]+@[^@\\s\\u0000-\\u001F\\u007F-\\u009F]+$";

const PROJECT_ID = new RegExp(PROJECT_ID_PATTERN);
const FLAG_NAME = new RegExp(FLAG_NAME_PATTERN);
const TARGETING_KEY = new RegExp(TARGETING_KEY_PATTERN);
const ATTRIBUTE_NAME = new RegExp(ATTRIBUTE_NAME_PATTERN);
// With the u flag, as the server's validator (Ajv) reads patterns: a lone surrogate is one code point.
const EMAIL = new RegExp(EMAIL_PATTERN, "u");
const LONE_SURROGATE = /\p{Cs}/u;

export const isProjectId = (value: unknown): value is string => typeof value === "string" && PROJECT_ID.test(value);

export const isEnvironmentId = isProjectId;

export const isFlagName = (value: unknown): value is string => typeof value === "string" && FLAG_NAME.test(value);

/**
 * ACTOR_ID_PATTERN, read character by character (the local evaluator checks every actor id of every
 * evaluation, and a regular expression and a spread cost more than the rest of a simple evaluation).
 * Lengths count code points, as JSON Schema's maxLength does: a string no longer than the limit in UTF-16
 * units is within it, and only a longer one is counted.
 */
export const isActorId = (value: unknown): value is string => {
  if (typeof value !== "string") return false;
  const length = value.length;
  if (length === 0 || value === "." || value === "..") return false;
  for (let i = 0; i < length; i++) {
    const unit = value.charCodeAt(i);
    if (unit <= 0x1f || (unit >= 0x7f && unit <= 0x9f)) return false;
  }
  return length <= ACTOR_ID_MAX_LENGTH || [...value].length <= ACTOR_ID_MAX_LENGTH;
};

export const isTargetingKey = (value: unknown): value is string =>
  typeof value === "string" && TARGETING_KEY.test(value);

/** Lengths count code points, as JSON Schema's maxLength does. */
export const isAttributeName = (value: unknown): value is string =>
  typeof value === "string" && ATTRIBUTE_NAME.test(value) && [...value].length <= ATTRIBUTE_NAME_MAX_LENGTH;

/**
 * Whether a value is an e-mail address `POST /users` takes: EMAIL_PATTERN, EMAIL_MIN_LENGTH to
 * EMAIL_MAX_LENGTH code points, and well-formed Unicode (as every string of a request must be). Single
 * sign-on refuses a provider's address that fails it, so it never adds a person the API would refuse.
 */
export const isEmail = (value: unknown): value is string => {
  if (typeof value !== "string" || LONE_SURROGATE.test(value) || !EMAIL.test(value)) return false;
  const length = [...value].length;
  return length >= EMAIL_MIN_LENGTH && length <= EMAIL_MAX_LENGTH;
};

/**
 * An e-mail as it is stored and compared, the one rule for every way in (POST /users, password sign-in
 * and its lockout, single sign-on, `admin-key user create`): A–Z lower-cased, nothing else changed. Not
 * Unicode's lower-casing, which maps other characters onto ASCII letters (the Kelvin sign U+212A becomes
 * k, U+0130 becomes i and a combining dot), so two different addresses would name one person.
 */
export const normalizeEmail = (email: string): string => email.replace(/[A-Z]/g, (c) => c.toLowerCase());
