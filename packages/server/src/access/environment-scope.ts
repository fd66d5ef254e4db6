import { AppError } from "../kernel/errors.js";
import type { Principal } from "./principal.js";

/**
 * The environment a caller acts on (null: the project's default), and whether its key sees that one only: a key
 * bound to an environment never reads another's configuration, not even in a flag's `environments`.
 */
export interface EnvironmentScope {
  readonly environment: string | null;
  readonly ownOnly: boolean;
}

/**
 * What a key bound to an environment may reach: the one place this is decided (docs/environments.md, "Keys
 * are bound to an environment"). A caller bound to none (a session, an admin key, a key bound to none, the
 * service itself) reaches whatever its role allows. A key bound to one environment, service or personal,
 * of any role, acts in that environment only, on every route:
 * - an environment the request names (`?environment=`, a copy's `from` and `to`, the `{environmentId}` of
 *   PATCH and DELETE /environments), the environment a key it creates is bound to, or that of a key it
 *   revokes: its own only;
 * - what belongs to the whole project (`target` null): never. That is creating an environment, copied or
 *   not; making an environment the default (the previous default changes, and every key bound to none
 *   follows); a key bound to no environment; webhooks, every route (a webhook receives every environment's
 *   events, and cannot be limited to one); granting or removing access to the project (a grant reaches
 *   every environment); deleting the project.
 * Routes that act wholly on the project's declare it (`projectWide`: the auth hook refuses); the others
 * call `refuseBeyond` with what they reach (the auth hook for `?environment=`, routes and services for the
 * rest). A flag's definition, segments and actors are the project's too, but their own rules apply to
 * them (a bound write key creates flags and changes segments, and deletes a flag only while the project
 * has one environment).
 */
export const mayReach = (bound: string | null, target: string | null): boolean => bound === null || bound === target;

/**
 * The 403 of a key bound to `bound` reaching beyond it: another environment (`target`), or the whole
 * project (`target` null; `what` says what it asked, as "create environments").
 */
function beyondEnvironment(bound: string, target: string | null, what?: string): AppError {
  return new AppError(
    403,
    "forbidden",
    target === null
      ? `This key is bound to environment "${bound}" and may not ${what ?? "act on the whole project"}: that reaches beyond its environment.`
      : `This key is bound to environment "${bound}" and may not act on "${target}".`,
  );
}

/** Throws the 403 of a key bound to one environment that reaches beyond it (see mayReach). */
export function refuseBeyond(bound: string | null, target: string | null, what?: string): void {
  if (bound !== null && !mayReach(bound, target)) throw beyondEnvironment(bound, target, what);
}

/** Throws the 403 of a bound key that names another environment (one it may not read or change the configuration of). */
export function refuseOtherEnvironment(principal: Principal | undefined, environment: string): void {
  if (principal) refuseBeyond(principal.environment, environment);
}
