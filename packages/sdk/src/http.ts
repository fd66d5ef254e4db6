import { FlagstaffError, isProblemDetails } from "./errors.js";

/** The part of `fetch` the client uses; pass your own to add headers, count requests or use a polyfill. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** An HTTP method the API uses. */
export type HttpMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A query string value: a list is sent as the parameter repeated; undefined is left out. */
export type QueryValue = string | number | readonly string[] | undefined;

/** Settings of the transport, already defaulted by the client. */
export interface TransportSettings {
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
  retries: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  fetch: FetchLike;
  headers: Record<string, string>;
}

/** One request the client makes. */
export interface RequestSpec {
  method: HttpMethod;
  /** Path with its parameters already percent-encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Send the API key (default true). */
  auth?: boolean;
  /** Overrides the client's retry count. */
  retries?: number;
  /** Treats a non-2xx answer as a success when this answers true. */
  accept?: (status: number, body: unknown) => boolean;
}

/** A successful answer. */
export interface TransportResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

const IDEMPOTENT = new Set<HttpMethod>(["GET", "HEAD", "PUT", "DELETE"]);
const RETRY_STATUSES = new Set([429, 503]);

/** Builds a query string (with the leading "?"), repeating the name for each element of a list. */
export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const values = typeof value === "string" || typeof value === "number" ? [String(value)] : value;
    for (const v of values) parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(v)}`);
  }
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
}

/** Milliseconds a Retry-After header asks to wait (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const inner = cause instanceof Error ? `: ${cause.message}` : "";
    return `${error.message}${inner}`;
  }
  return String(error);
}

/** Sends requests with a timeout per attempt and retries idempotent ones on 429, 503 and network errors. */
export class Transport {
  /** Creates a transport over the given settings. */
  constructor(private readonly settings: TransportSettings) {}

  /** Sends a request and answers its parsed JSON body (undefined for 204), or throws a FlagstaffError. */
  async request<T>(spec: RequestSpec): Promise<TransportResponse<T>> {
    const url = `${this.settings.baseUrl}${spec.path}${queryString(spec.query)}`;
    const retries = IDEMPOTENT.has(spec.method) ? Math.max(0, spec.retries ?? this.settings.retries) : 0;
    for (let attempt = 0; ; attempt++) {
      const sent = await this.attempt(spec, url);
      let failure: FlagstaffError;
      let retryAfter: number | undefined;
      if (FlagstaffError.is(sent)) {
        // Only a network error may be retried; a timeout is not, so a request never takes much over timeoutMs.
        if (sent.code !== "network_error") throw sent;
        failure = sent;
      } else {
        const outcome = this.interpret<T>(spec, url, sent.response, sent.text);
        if (!FlagstaffError.is(outcome)) return outcome;
        if (!RETRY_STATUSES.has(sent.response.status)) throw outcome;
        failure = outcome;
        retryAfter = parseRetryAfter(sent.response.headers.get("retry-after"));
      }
      if (attempt >= retries) throw failure;
      const backoff = Math.min(this.settings.retryDelayMs * 2 ** attempt, this.settings.maxRetryDelayMs);
      const delay = retryAfter ?? backoff;
      if (delay > this.settings.maxRetryDelayMs) throw failure;
      await sleep(delay);
    }
  }

  /** Sends one attempt; answers the response and its text, or the transport failure (never throws). */
  private async attempt(
    spec: RequestSpec,
    url: string,
  ): Promise<{ response: Response; text: string } | FlagstaffError> {
    const headers: Record<string, string> = {
      accept: "application/json, application/problem+json",
      ...this.settings.headers,
    };
    if (spec.auth !== false && this.settings.apiKey !== undefined) {
      headers.authorization = `Bearer ${this.settings.apiKey}`;
    }
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers["content-type"] = "application/json";
    }
    const controller = new AbortController();
    let timedOut = false;
    const { timeoutMs } = this.settings;
    const timer =
      timeoutMs > 0 && Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, timeoutMs)
        : undefined;
    try {
      const response = await this.settings.fetch(url, {
        method: spec.method,
        headers,
        body,
        signal: controller.signal,
      });
      const text = spec.method === "HEAD" ? "" : await response.text();
      return { response, text };
    } catch (error) {
      if (timedOut) {
        return new FlagstaffError({
          status: 0,
          code: "timeout",
          detail: `No answer to ${spec.method} ${url} within ${timeoutMs} ms.`,
          method: spec.method,
          url,
          cause: error,
        });
      }
      return new FlagstaffError({
        status: 0,
        code: "network_error",
        detail: `${spec.method} ${url} failed: ${describe(error)}`,
        method: spec.method,
        url,
        cause: error,
      });
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  private interpret<T>(
    spec: RequestSpec,
    url: string,
    response: Response,
    text: string,
  ): TransportResponse<T> | FlagstaffError {
    const { status } = response;
    let parsed: unknown;
    let parseFailed = false;
    if (text !== "") {
      try {
        parsed = JSON.parse(text);
      } catch {
        parseFailed = true;
      }
    }
    const success = (status >= 200 && status < 300) || (!parseFailed && spec.accept?.(status, parsed) === true);
    if (success) {
      if (parseFailed) {
        return new FlagstaffError({
          status,
          code: "invalid_response",
          detail: `${spec.method} ${url} answered ${status} with a body that is not JSON.`,
          method: spec.method,
          url,
        });
      }
      return { status, headers: response.headers, body: parsed as T };
    }
    if (isProblemDetails(parsed)) {
      return new FlagstaffError({
        status,
        code: parsed.code,
        detail: typeof parsed.detail === "string" ? parsed.detail : (parsed.title ?? `HTTP ${status}`),
        problem: parsed,
        method: spec.method,
        url,
      });
    }
    const statusText = response.statusText ? ` ${response.statusText}` : "";
    return new FlagstaffError({
      status,
      code: "http_error",
      detail: `${spec.method} ${url} answered ${status}${statusText} without problem details.`,
      method: spec.method,
      url,
    });
  }
}
