import { assertConforms, loadDocument } from "./openapi-conformance.js";

/** The admin key every server the harness starts is configured with, and the key requests send by default. */
export const ADMIN_KEY = "test-admin-key-0123456789";

/** How long a request may take unless it says otherwise: long enough for a loaded machine, never forever. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  /** API key; defaults to the admin key. Pass null to send no Authorization header. */
  key?: string | null;
  body?: unknown;
  /** A raw body sent as it is (with no Content-Type unless given in headers). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /**
   * Check the answer against the server's OpenAPI document (default true; see openapi-conformance.ts).
   * Turn it off only for requests that are junk on purpose.
   */
  conformance?: boolean;
  /** Abort the request after this many milliseconds (default DEFAULT_REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
}

/**
 * Sends one request over real HTTP and parses a JSON answer, which must conform to the server's OpenAPI
 * document (a ConformanceError is thrown otherwise) unless `conformance: false`.
 */
export async function httpRequest<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const key = options.key === undefined ? ADMIN_KEY : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const conformance = options.conformance !== false;
  // The document is fetched before the request, while the server surely answers (an answer may arrive as
  // it shuts down). A failure here is retried after the answer; a server that is down fails the request
  // itself, as it would without the check.
  const document = conformance ? await loadDocument(baseUrl).catch(() => undefined) : undefined;
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: body as BodyInit | undefined,
    signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  let parsed: unknown = text;
  if (text !== "" && /json/.test(response.headers.get("content-type") ?? "")) parsed = JSON.parse(text);
  if (conformance) {
    const type = response.headers.get("content-type");
    await assertConforms(baseUrl, method, path, response.status, type, parsed, document);
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Sends a request, insists on one status, and answers the body. */
export async function expectStatus<T = any>(
  status: number,
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const res = await httpRequest<T>(baseUrl, method, path, options);
  if (res.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${res.status} ${res.text}`);
  return res.body;
}

/** What a check answers, as a short string: "true", "false", or "<status> <code>" (5 s deadline). */
export async function checkState(
  baseUrl: string,
  project: string,
  flag: string,
  actors: readonly string[] = [],
  key?: string,
): Promise<string> {
  const query = actors.length === 0 ? "" : `?${actors.map((a) => `actorIds=${encodeURIComponent(a)}`).join("&")}`;
  const path = `/projects/${project}/flags/${encodeURIComponent(flag)}/check${query}`;
  const res = await httpRequest(baseUrl, "GET", path, { key, timeoutMs: 5000 });
  if (res.status === 200) return String(res.body.enabled);
  return `${res.status} ${res.body?.code ?? res.text}`;
}

/** Asserts a response is RFC 9457 problem details with the given status and code. */
export function expectProblem(res: ApiResponse, status: number, code: string): void {
  const type = res.headers.get("content-type") ?? "";
  if (res.status !== status || !type.startsWith("application/problem+json") || res.body?.code !== code) {
    throw new Error(`expected ${status} ${code} as problem+json, got ${res.status} ${type} ${res.text}`);
  }
  if (res.body.status !== status || typeof res.body.title !== "string" || typeof res.body.detail !== "string") {
    throw new Error(`problem details incomplete: ${res.text}`);
  }
  if (res.body.type !== `urn:flagstaff:problem:${code}`) throw new Error(`problem type wrong: ${res.text}`);
}
