import ky, { HTTPError, TimeoutError } from "ky";
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
  /** Headers of this request only, such as `if-match`. */
  headers?: Record<string, string>;
  /** Treats a non-2xx answer as a success when this answers true. */
  accept?: (status: number, body: unknown) => boolean;
  /**
   * The timeout covers reading the body too, not only the wait for the answer's headers (OFREP's
   * evaluations: an evaluation gives up after `timeoutMs` whatever stalls); reading it then fails as a
   * network error rather than with the body's own error.
   */
  timeoutCoversBody?: boolean;
}

/** A successful answer. */
export interface TransportResponse<T> {
  status: number;
  headers: Headers;
  body: T;
  /** The URL asked. */
  url: string;
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

/** Seconds to wait, from a Retry-After header (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const inner = cause instanceof Error ? `: ${cause.message}` : "";
    return `${error.message}${inner}`;
  }
  return String(error);
}

/** A timeout over a whole exchange (see RequestSpec.timeoutCoversBody): aborts its signal when it passes. */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  expired = false;

  constructor(ms: number) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort();
    }, ms);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/**
 * Sends requests through ky: a timeout per attempt, and retries of idempotent requests on 429, 503 and
 * network errors, with exponential backoff or the server's Retry-After. Timeouts are not retried, so a
 * request never takes much over `timeoutMs` per attempt.
 */
export class Transport {
  /** Creates a transport over the given settings. */
  constructor(private readonly settings: TransportSettings) {}

  /** Sends a request and answers its parsed JSON body (undefined for 204), or throws a FlagstaffError. */
  async request<T>(spec: RequestSpec): Promise<TransportResponse<T>> {
    const url = `${this.settings.baseUrl}${spec.path}${queryString(spec.query)}`;
    const { timeoutMs, retryDelayMs, maxRetryDelayMs } = this.settings;
    const retries = IDEMPOTENT.has(spec.method) ? Math.max(0, spec.retries ?? this.settings.retries) : 0;
    const headers: Record<string, string> = {
      accept: "application/json, application/problem+json",
      ...this.settings.headers,
      ...spec.headers,
    };
    if (spec.auth !== false && this.settings.apiKey !== undefined) {
      headers.authorization = `Bearer ${this.settings.apiKey}`;
    }
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    /** The body of an answer ky threw as an HTTPError: ky has read it already (parsed, when JSON). */
    let readBody: string | undefined;
    let attempts = 0;
    const limited = timeoutMs > 0 && Number.isFinite(timeoutMs);
    const deadline = spec.timeoutCoversBody === true && limited ? new Deadline(timeoutMs) : undefined;
    const timeoutError = (cause: unknown) =>
      new FlagstaffError({
        status: 0,
        code: "timeout",
        detail: `No answer to ${spec.method} ${url} within ${timeoutMs} ms.`,
        method: spec.method,
        url,
        cause,
      });
    const networkError = (cause: unknown) =>
      new FlagstaffError({
        status: 0,
        code: "network_error",
        detail: `${spec.method} ${url} failed: ${describe(cause)}`,
        method: spec.method,
        url,
        cause,
      });
    try {
      response = await ky(url, {
        method: spec.method,
        headers,
        body,
        timeout: limited && deadline === undefined ? timeoutMs : false,
        ...(deadline ? { signal: deadline.signal } : {}),
        retry: {
          limit: retries,
          methods: [...IDEMPOTENT].map((m) => m.toLowerCase()),
          statusCodes: [...RETRY_STATUSES],
          afterStatusCodes: [...RETRY_STATUSES],
          maxRetryAfter: maxRetryDelayMs,
          backoffLimit: maxRetryDelayMs,
          delay: (attempt) => retryDelayMs * 2 ** (attempt - 1),
        },
        // ky retries a status only by throwing an HTTPError, and reads the response's body into it (`data`,
        // parsed when JSON). So it throws only for an answer it will retry; the last answer comes back as it
        // is, its body unread, and is interpreted like any other.
        throwHttpErrors: (status) => RETRY_STATUSES.has(status) && attempts <= retries,
        // ky hands fetch a Request; the client's FetchLike takes a URL and init, as `fetch` users expect.
        fetch: (input, init) => {
          const request = input instanceof Request ? input : undefined;
          const target = request ? request.url : String(input);
          attempts += 1;
          return this.settings.fetch(target, {
            method: spec.method,
            headers,
            body,
            signal: request?.signal ?? init?.signal ?? null,
          });
        },
      });
    } catch (error) {
      if (error instanceof HTTPError) {
        response = error.response;
        readBody = typeof error.data === "string" ? error.data : (JSON.stringify(error.data) ?? "");
      } else {
        deadline?.clear();
        if (error instanceof TimeoutError || deadline?.expired) throw timeoutError(error);
        throw networkError(error);
      }
    }
    let text: string;
    if (deadline === undefined) text = spec.method === "HEAD" ? "" : (readBody ?? (await response.text()));
    else {
      try {
        text = spec.method === "HEAD" ? "" : (readBody ?? (await response.text()));
      } catch (error) {
        throw deadline.expired ? timeoutError(error) : networkError(error);
      } finally {
        deadline.clear();
      }
    }
    const outcome = this.interpret<T>(spec, url, response, text);
    if (FlagstaffError.is(outcome)) throw outcome;
    return outcome;
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
          body: text,
        });
      }
      return { status, headers: response.headers, body: parsed as T, url };
    }
    const wait = retryAfterSeconds(response.headers.get("retry-after"));
    if (isProblemDetails(parsed)) {
      return new FlagstaffError({
        status,
        code: parsed.code,
        detail: typeof parsed.detail === "string" ? parsed.detail : (parsed.title ?? `HTTP ${status}`),
        problem: parsed,
        method: spec.method,
        url,
        retryAfterSeconds: wait,
      });
    }
    const statusText = response.statusText ? ` ${response.statusText}` : "";
    return new FlagstaffError({
      status,
      code: "http_error",
      detail: `${spec.method} ${url} answered ${status}${statusText} without problem details.`,
      method: spec.method,
      url,
      retryAfterSeconds: wait,
      body: parseFailed ? text : parsed,
    });
  }
}
