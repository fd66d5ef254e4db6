/**
 * A webhook URL as the history and payloads record it: credentials (`user:password@`), query and fragment
 * replaced by `***`, scheme, host, port and path kept. Receivers often take a secret in the URL (basic
 * auth, `?token=`), and the history outlives the webhook and reaches every webhook receiver, while the
 * URL as given is for admin keys only (the webhooks API). Idempotent: a redacted URL stays as it is.
 */
export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Never stored by this service (URLs are checked before they are saved); hide it all rather than guess.
    return "***";
  }
  const userinfo = url.username !== "" || url.password !== "" ? "***@" : "";
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${url.search === "" ? "" : "?***"}${url.hash === "" ? "" : "#***"}`;
}

/** A recorded webhook state with its `url` redacted (states recorded before redaction existed included). */
export function redactState(state: Record<string, unknown> | null): Record<string, unknown> | null {
  if (state === null || typeof state.url !== "string") return state;
  return { ...state, url: redactUrl(state.url) };
}
