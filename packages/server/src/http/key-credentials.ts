import type { IncomingHttpHeaders } from "node:http";
import type { Principal } from "../access/principal.js";
import { AppError } from "../kernel/errors.js";
import type { Snapshot } from "../features/evaluation/snapshot.js";
import { hashApiKey } from "../kernel/ids.js";

// A request's key: where it is read from, and the principal the snapshot holds for it.

const BEARER = /^Bearer +([^\s]+) *$/i;

/** A 401 with the detail of what was wrong with the credentials. */
export const unauthorized = (detail: string) => new AppError(401, "unauthorized", detail);

/**
 * The key a request presents: `Authorization: Bearer <key>`, or `X-API-Key: <key>` as OFREP clients may
 * send. Undefined when there is none or the header is malformed (`missingKeyProblem` says which).
 */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.authorization;
  if (header === undefined) {
    const apiKey = headers["x-api-key"];
    return typeof apiKey === "string" && apiKey !== "" ? apiKey : undefined;
  }
  return BEARER.exec(header)?.[1];
}

/** The 401 for a request whose key `presentedKey` could not read. */
export function missingKeyProblem(headers: IncomingHttpHeaders): AppError {
  return headers.authorization === undefined
    ? unauthorized("Send an API key as Authorization: Bearer <key>.")
    : unauthorized("The Authorization header must be Bearer <key>.");
}

/** Keys whose hashes are remembered; applications reuse a handful of keys, so this bounds a tiny cache. */
const HASH_CACHE_SIZE = 1024;

/**
 * Finds the principal of a presented key in the snapshot (no database I/O). SHA-256 of presented keys
 * is remembered for the keys seen most recently, so the check path costs a map lookup instead of a hash.
 * The cache holds hashes of keys, valid or not, never principals, so a revocation takes effect as soon
 * as it is in this instance's snapshot.
 */
export class Credentials {
  private readonly hashes = new Map<string, string>();

  constructor(private readonly snapshot: Snapshot) {}

  principalOf(key: string): Principal | undefined {
    let hash = this.hashes.get(key);
    if (hash === undefined) {
      hash = hashApiKey(key);
      if (this.hashes.size >= HASH_CACHE_SIZE) this.hashes.delete(this.hashes.keys().next().value as string);
      this.hashes.set(key, hash);
    }
    return this.snapshot.principal(hash);
  }
}
