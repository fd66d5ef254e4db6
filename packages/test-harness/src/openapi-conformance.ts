// Checks answers against the server's own OpenAPI document (GET /openapi.json): the operation exists, it
// declares the status, the media type is one it declares, and a JSON body matches the declared schema.
// The harness (http.ts) runs this on every answer, so the document cannot drift from the code.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Json = Record<string, any>;

/** The base URI the document is registered under in Ajv: its refs (`#/components/schemas/…`) resolve inside it. */
const DOC_ID = "https://flagstaff.invalid/openapi.json";
const OPERATION_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
/** Fastify's router refuses path segments longer than this (app.ts) before any route is chosen. */
const MAX_SEGMENT_LENGTH = 4096;
/** How long fetching the document may take: every request of the harness has a deadline. */
const DOCUMENT_TIMEOUT_MS = 30_000;

export class ConformanceError extends Error {
  override name = "ConformanceError";
}

interface PathEntry {
  readonly template: string;
  /** One entry per segment: the literal text, or null for a `{parameter}`. */
  readonly segments: readonly (string | null)[];
  readonly literals: number;
  readonly item: Json;
}

/** JSON Pointer (RFC 6901) of a location, as a URI fragment. */
function pointer(...tokens: string[]): string {
  return tokens.map((t) => `/${encodeURIComponent(t.replaceAll("~", "~0").replaceAll("/", "~1"))}`).join("");
}

/** `type/subtype` in lower case, without parameters. */
function mediaType(contentType: string | null | undefined): string | undefined {
  const type = contentType?.split(";", 1)[0]?.trim().toLowerCase();
  return type === undefined || type === "" ? undefined : type;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => `  ${e.instancePath || "/"} ${e.message ?? e.keyword} (${e.schemaPath}) ${JSON.stringify(e.params)}`)
    .join("\n");
}

function excerpt(body: unknown): string {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return text === undefined ? "(no body)" : text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

/** One server's document, with its response schemas compiled on first use. */
export class OpenApiDocument {
  private readonly ajv: Ajv2020;
  private readonly paths: PathEntry[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: Json) {
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; the OpenAPI-only keywords (example, xml, discriminator…)
    // are ignored, hence strict: false.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(document, DOC_ID);
    this.paths = Object.entries((document.paths ?? {}) as Record<string, Json>).map(([template, item]) => {
      const segments = template
        .split("/")
        .slice(1)
        .map((s) => (/^\{[^}]+\}$/.test(s) ? null : s));
      return { template, segments, literals: segments.filter((s) => s !== null).length, item };
    });
  }

  /** The documented path template a concrete path falls under (literal segments win, as in the router). */
  matchPath(pathname: string): PathEntry | undefined {
    const trimmed = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
    const parts = trimmed.split("/").slice(1);
    let best: PathEntry | undefined;
    for (const entry of this.paths) {
      if (entry.segments.length !== parts.length) continue;
      // A parameter may be empty: the router matches /projects//flags as /projects/{projectId}/flags.
      const fits = entry.segments.every((s, i) => s === null || s === parts[i]);
      if (fits && (best === undefined || entry.literals > best.literals)) best = entry;
    }
    return best;
  }

  /** A validator for the schema at a JSON Pointer into the document. */
  validatorAt(fragment: string): ValidateFunction {
    let validate = this.validators.get(fragment);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}#${fragment}` });
      this.validators.set(fragment, validate);
    }
    return validate;
  }

  /** The Problem schema (components.schemas.Problem), for problem details outside any documented operation. */
  problemValidator(): ValidateFunction | undefined {
    return this.document.components?.schemas?.Problem === undefined
      ? undefined
      : this.validatorAt(pointer("components", "schemas", "Problem"));
  }
}

const documents = new Map<string, Promise<OpenApiDocument>>();
/**
 * Prepared documents by their text: every server of a test file serves the same document (or one of a few,
 * by configuration), and compiling its schemas again for each would cost more than the tests themselves.
 */
const prepared = new Map<string, OpenApiDocument>();

function prepare(text: string): OpenApiDocument {
  let document = prepared.get(text);
  if (document === undefined) {
    document = new OpenApiDocument(JSON.parse(text) as Json);
    prepared.set(text, document);
  }
  return document;
}

/** Fetches (once per base URL) and prepares the server's OpenAPI document. */
export function loadDocument(baseUrl: string): Promise<OpenApiDocument> {
  let loading = documents.get(baseUrl);
  if (loading === undefined) {
    loading = (async () => {
      const res = await fetch(`${baseUrl}/openapi.json`, { signal: AbortSignal.timeout(DOCUMENT_TIMEOUT_MS) });
      const text = await res.text();
      if (res.status !== 200) throw new ConformanceError(`GET ${baseUrl}/openapi.json answered ${res.status}: ${text}`);
      return prepare(text);
    })();
    documents.set(baseUrl, loading);
    // A failed fetch is not remembered: the next answer tries again.
    loading.catch(() => documents.delete(baseUrl));
  }
  return loading;
}

/** Drops the cached document of a base URL (its server stopped; another may later listen on the same port). */
export function forgetDocument(baseUrl: string): void {
  documents.delete(baseUrl);
}

/** Whether the router refuses this path before choosing a route (FST_ERR_BAD_URL, FST_ERR_MAX_PARAM_LENGTH). */
function refusedByRouter(pathname: string): boolean {
  return pathname.split("/").some((segment) => {
    if (segment.length > MAX_SEGMENT_LENGTH) return true;
    try {
      decodeURIComponent(segment);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * Throws a ConformanceError unless the answer is one the document describes: a documented operation, a
 * status it declares (exactly, or as `4XX`/`default`), a media type it declares for that status, and a
 * body matching that media type's schema. `body` is the parsed JSON for JSON media types, the text
 * otherwise; an empty answer is `""` or undefined.
 *
 * Not checked against an operation (the document cannot describe them), though problem details among
 * them must still match the Problem schema: /openapi.json and /docs…, paths under no documented
 * template (404), methods a documented path does not take (405), and paths the router refuses (400).
 *
 * `document` is the server's document when the caller already holds it (fetched before the request, so
 * an answer that arrives while the server shuts down is still checked); otherwise it is fetched.
 */
export async function assertConforms(
  baseUrl: string,
  method: string,
  pathWithQuery: string,
  status: number,
  contentType: string | null | undefined,
  body: unknown,
  document?: OpenApiDocument,
): Promise<void> {
  // What fetch actually sent: it normalises dot segments and percent-encodes as a URL must.
  const pathname = new URL(`${baseUrl}${pathWithQuery}`).pathname;
  if (pathname === "/openapi.json" || pathname === "/docs" || pathname.startsWith("/docs/")) return;

  const doc = document ?? (await loadDocument(baseUrl));
  const verb = method.toUpperCase();
  const where = `${verb} ${pathWithQuery}`;
  const media = mediaType(contentType);
  const empty = body === undefined || body === "";

  const undocumented = (reason: string) => {
    if (media === "application/problem+json" && !empty) {
      const validate = doc.problemValidator();
      if (validate !== undefined && !validate(body)) {
        throw new ConformanceError(
          `${where} answered ${status} (${reason}) with problem details that do not match the Problem schema:\n` +
            `${describeErrors(validate.errors)}\nbody: ${excerpt(body)}`,
        );
      }
    }
  };

  const entry = doc.matchPath(pathname);
  if (entry === undefined) return undocumented("a path the document does not describe");
  if (status === 400 && refusedByRouter(pathname)) return undocumented("a path the router refuses");

  // Fastify answers HEAD for every GET route; the document describes the GET.
  const opKey = verb.toLowerCase();
  const opName = opKey === "head" && entry.item.head === undefined ? "get" : opKey;
  const operation = OPERATION_METHODS.includes(opName) ? (entry.item[opName] as Json | undefined) : undefined;
  if (operation === undefined) {
    if (status === 405) return undocumented("a method the path does not take");
    throw new ConformanceError(
      `${where} answered ${status}, but the document has no ${opName.toUpperCase()} operation at ${entry.template}`,
    );
  }

  const responses = (operation.responses ?? {}) as Record<string, Json>;
  const statusKey = [String(status), `${Math.floor(status / 100)}XX`, "default"].find((k) => responses[k]);
  if (statusKey === undefined) {
    throw new ConformanceError(
      `${where} answered ${status}, which the document does not declare for ${opName.toUpperCase()} ${entry.template} ` +
        `(declared: ${Object.keys(responses).join(", ")})\nbody: ${excerpt(body)}`,
    );
  }
  const response = responses[statusKey] as Json;

  // A HEAD answer carries the GET's headers but never a body.
  if (verb === "HEAD") return;

  const content = response.content as Record<string, Json> | undefined;
  if (content === undefined || Object.keys(content).length === 0) {
    if (!empty) {
      throw new ConformanceError(
        `${where} answered ${status} with a body (${contentType}), but the document declares none: ${excerpt(body)}`,
      );
    }
    return;
  }
  if (empty) {
    throw new ConformanceError(
      `${where} answered ${status} with no body, but the document declares ${Object.keys(content).join(", ")}`,
    );
  }

  const declared = Object.keys(content);
  const key =
    media === undefined
      ? undefined
      : (declared.find((k) => mediaType(k) === media) ??
        declared.find((k) => mediaType(k) === `${media.split("/", 1)[0]}/*`) ??
        declared.find((k) => mediaType(k) === "*/*"));
  if (key === undefined) {
    throw new ConformanceError(
      `${where} answered ${status} as ${contentType ?? "(no Content-Type)"}, but the document declares only ` +
        `${declared.join(", ")} for ${opName.toUpperCase()} ${entry.template} ${statusKey}`,
    );
  }
  if (content[key]?.schema === undefined) return;

  const validate = doc.validatorAt(
    pointer("paths", entry.template, opName, "responses", statusKey, "content", key, "schema"),
  );
  if (!validate(body)) {
    throw new ConformanceError(
      `${where} answered ${status} with a body that does not match the document ` +
        `(${opName.toUpperCase()} ${entry.template} ${statusKey} ${key}):\n${describeErrors(validate.errors)}\n` +
        `body: ${excerpt(body)}`,
    );
  }
}
