import type { FetchLike } from "@flagstaff/sdk";

// The one OFREP request the provider makes, over plain fetch: the SDK has no call that answers a reason.

/** What one OFREP request came back with: an HTTP answer (any status), or no answer at all. */
export type OfrepAnswer =
  | { readonly kind: "answer"; readonly status: number; readonly body: unknown }
  | { readonly kind: "timeout" | "network"; readonly message: string };

/**
 * The context sent to the server: the actor (`targetingKey`), the extra actors (`actorIds`), and any other
 * member is an attribute the flag's rules read.
 */
export interface OfrepContext {
  targetingKey?: string;
  actorIds?: string[];
  [attribute: string]: unknown;
}

/** Describes an error and its cause in one line. */
function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}

/** Sends `POST {baseUrl}/ofrep/v1/evaluate/flags/{key}`; never throws, and gives up after `timeoutMs` (0: never). */
export async function evaluateRemotely(
  settings: { baseUrl: string; apiKey: string; timeoutMs: number; fetch: FetchLike },
  flagKey: string,
  context: OfrepContext,
): Promise<OfrepAnswer> {
  const url = `${settings.baseUrl}/ofrep/v1/evaluate/flags/${encodeURIComponent(flagKey)}`;
  const controller = new AbortController();
  let timedOut = false;
  const timer =
    settings.timeoutMs > 0 && Number.isFinite(settings.timeoutMs)
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, settings.timeoutMs)
      : undefined;
  try {
    const response = await settings.fetch(url, {
      method: "POST",
      headers: {
        accept: "application/json, application/problem+json",
        authorization: `Bearer ${settings.apiKey}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ context }),
      signal: controller.signal,
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      // Not JSON (a proxy's error page, say): the caller sees the text.
    }
    return { kind: "answer", status: response.status, body };
  } catch (error) {
    if (timedOut) {
      return { kind: "timeout", message: `No answer from ${url} within ${settings.timeoutMs} ms.` };
    }
    return { kind: "network", message: `POST ${url} failed: ${describe(error)}` };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
