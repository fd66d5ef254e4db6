// The environment shown, chosen per project: named in the URL, remembered in localStorage, and limited to
// what the key may see. The calls (the environment list, a flag's copy, `?environment=`) are the SDK's.
import type { Environment } from "@flagstaff/sdk";

/** The environment is not a secret (the key stays in sessionStorage): remembered across tabs and visits. */
const STORAGE_PREFIX = "flagstaff.console.environment.";

export function rememberedEnvironment(project: string): string | undefined {
  try {
    return localStorage.getItem(STORAGE_PREFIX + project) ?? undefined;
  } catch {
    return undefined;
  }
}

export function rememberEnvironment(project: string, environment: string): void {
  try {
    if (rememberedEnvironment(project) !== environment) localStorage.setItem(STORAGE_PREFIX + project, environment);
  } catch {
    // Storage refused (private mode, quota): the choice lasts as long as the page.
  }
}

/**
 * The environments a key may see: its own only when it is bound to one (the server answers 403 for the
 * others), every one otherwise.
 */
export function visibleEnvironments(all: readonly Environment[], bound: string | null | undefined): Environment[] {
  return bound ? all.filter((e) => e.id === bound) : [...all];
}

/**
 * The environment shown: the one the URL names (a shared link), else the one remembered for the project,
 * else the project's default; each only if the key may see it. Undefined while there is none to show.
 */
export function chooseEnvironment(
  visible: readonly Environment[],
  named: string | null,
  remembered: string | undefined,
): Environment | undefined {
  const find = (id: string | null | undefined) => (id ? visible.find((e) => e.id === id) : undefined);
  return find(named) ?? find(remembered) ?? visible.find((e) => e.default) ?? visible[0];
}
