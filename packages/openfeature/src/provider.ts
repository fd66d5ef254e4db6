import {
  FLAG_NAME_MAX_LENGTH,
  type FetchLike,
  FlagstaffClient,
  isFlagName,
  isFlagstaffError,
  type OfrepApi,
  type OfrepEvaluationContext,
} from "@flagstaff/sdk";
import {
  ErrorCode,
  type EvaluationContext,
  FlagNotFoundError,
  type FlagMetadata,
  GeneralError,
  ParseError,
  ProviderEvents,
  ProviderFatalError,
  type ResolutionDetails,
} from "@openfeature/server-sdk";
import { actorsOf, attributesOf, errorFromCode, FlagstaffResolver, type ResolvedType, resolved } from "./resolvers.js";

/** Options of a FlagstaffProvider. */
export interface FlagstaffProviderOptions {
  /** Where the Flagstaff server listens, e.g. `http://127.0.0.1:8080`; a path prefix is kept. */
  baseUrl: string;
  /** A project key of any role (`check` is enough). Admin keys belong to no project and cannot evaluate. */
  apiKey: string;
  /** The project the key belongs to; `initialize()` verifies that it does. */
  projectId: string;
  /** Milliseconds an evaluation may take before it resolves to the default (default 2000; 0 for no limit). */
  timeoutMs?: number;
  /** The client `initialize()` uses to verify base URL, key and project (default: one made from these options). */
  client?: FlagstaffClient;
  /** The fetch evaluations use (default `globalThis.fetch`); also given to the default client. */
  fetch?: FetchLike;
}

/** A name no flag can have (flag names start with a letter or digit), so probing it answers "flag not found". */
const PROBE_FLAG = "-flagstaff-openfeature-probe";

const DEFAULT_TIMEOUT_MS = 2000;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Describes an error and its cause in one line. */
function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}

/** What one OFREP request came back with: an HTTP answer (any status), or no answer at all. */
type OfrepAnswer =
  | { readonly kind: "answer"; readonly status: number; readonly body: unknown }
  | { readonly kind: "timeout" | "network"; readonly message: string };

/**
 * Sends one OFREP evaluation through the SDK (`client.ofrep.evaluate`) and answers what came back, never
 * throwing: its 200, any other status with its body (OFREP's failure, problem details, a proxy's page), a
 * timeout (`timeoutMs` covers the whole answer) or a network failure.
 */
async function evaluateRemotely(
  ofrep: OfrepApi,
  baseUrl: string,
  flagKey: string,
  context: OfrepEvaluationContext,
  timeoutMs: number,
): Promise<OfrepAnswer> {
  try {
    return { kind: "answer", status: 200, body: await ofrep.evaluate(flagKey, context) };
  } catch (error) {
    const url = `${baseUrl}/ofrep/v1/evaluate/flags/${encodeURIComponent(flagKey)}`;
    // What failed before anything was sent (a context JSON cannot carry, such as a BigInt) is a network failure.
    if (!isFlagstaffError(error)) return { kind: "network", message: `POST ${url} failed: ${describe(error)}` };
    if (error.status !== 0) return { kind: "answer", status: error.status, body: error.body ?? error.problem };
    if (error.code === "timeout") return { kind: "timeout", message: `No answer from ${url} within ${timeoutMs} ms.` };
    // Told with fetch's own error, as fetch gave it (the SDK's transport wraps a failed fetch in a NetworkError).
    const cause = error.cause;
    const fetchError =
      cause instanceof Error && cause.name === "NetworkError" && cause.cause !== undefined ? cause.cause : cause;
    return { kind: "network", message: `POST ${url} failed: ${describe(fetchError)}` };
  }
}

/** The primitive entries of the server's `metadata`, which is what OpenFeature's flag metadata may hold. */
function metadataOf(value: unknown): FlagMetadata {
  const out: Record<string, string | number | boolean> = {};
  if (!isRecord(value)) return out;
  for (const [name, entry] of Object.entries(value)) {
    if (typeof entry === "string" || typeof entry === "number" || typeof entry === "boolean") out[name] = entry;
  }
  return out;
}

/** A sentence about an HTTP answer that is an error: its problem details or OFREP failure, or its status. */
function describeFailure(status: number, body: unknown): string {
  if (isRecord(body)) {
    if (typeof body.code === "string") {
      return `Flagstaff answered ${status} ${body.code}: ${typeof body.detail === "string" ? body.detail : ""}`.trim();
    }
    if (typeof body.errorDetails === "string") return `Flagstaff answered ${status}: ${body.errorDetails}`;
  }
  return `Flagstaff answered ${status} without details.`;
}

/**
 * An OpenFeature server provider that evaluates Flagstaff's flags (boolean, string, number and object)
 * through its OFREP endpoint, with the context's attributes for the flags' rules.
 */
export class FlagstaffProvider extends FlagstaffResolver {
  /** The provider's name, as OpenFeature reports it. */
  readonly metadata = { name: "flagstaff" } as const;
  // events: PROVIDER_ERROR when the server stops answering, PROVIDER_READY when it answers again.

  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly projectId: string;
  private readonly timeoutMs: number;
  private readonly client: FlagstaffClient;
  /** OFREP through the SDK, with this provider's base URL, key, timeout and fetch. */
  private readonly ofrep: OfrepApi;
  /** False after the server failed to answer (or answered 5xx), until an evaluation gets an answer again. */
  private healthy = true;

  /** Creates a provider; nothing is sent until `initialize()` or the first evaluation. */
  constructor(options: FlagstaffProviderOptions) {
    super();
    if (typeof options?.baseUrl !== "string" || options.baseUrl === "") {
      throw new TypeError("FlagstaffProvider needs a baseUrl");
    }
    if (typeof options.apiKey !== "string" || options.apiKey === "") {
      throw new TypeError("FlagstaffProvider needs an apiKey");
    }
    if (typeof options.projectId !== "string" || options.projectId === "") {
      throw new TypeError("FlagstaffProvider needs a projectId");
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs) || timeoutMs < 0) {
      throw new TypeError("FlagstaffProvider's timeoutMs must be a number >= 0");
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.apiKey = options.apiKey;
    this.projectId = options.projectId;
    this.timeoutMs = timeoutMs;
    const fetch: FetchLike = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    const own = new FlagstaffClient({ baseUrl: this.baseUrl, apiKey: this.apiKey, timeoutMs, fetch });
    this.ofrep = own.ofrep;
    this.client = options.client ?? own;
  }

  /**
   * Verifies that the server answers, that the key is valid and belongs to `projectId`, and that the server
   * evaluates over OFREP with it. A wrong key or project fails with PROVIDER_FATAL; an unreachable server
   * fails with GENERAL, and the provider turns ready on the first evaluation that reaches it.
   */
  async initialize(): Promise<void> {
    try {
      await this.client.flags.check(this.projectId, PROBE_FLAG);
    } catch (error) {
      if (!isFlagstaffError(error)) throw error;
      if (error.code === "flag_not_found") {
        // Expected: the key may check this project, which exists.
      } else if (error.code === "unauthorized") {
        throw new ProviderFatalError(`Flagstaff refused the API key: ${error.detail}`, { cause: error });
      } else if (error.code === "forbidden") {
        throw new ProviderFatalError(`The API key does not belong to project "${this.projectId}": ${error.detail}`, {
          cause: error,
        });
      } else if (error.code === "project_not_found") {
        throw new ProviderFatalError(`Project "${this.projectId}" does not exist: ${error.detail}`, { cause: error });
      } else {
        this.healthy = false;
        throw new GeneralError(`Flagstaff at ${this.baseUrl} could not be used: ${error.message}`, { cause: error });
      }
    }
    const answer = await evaluateRemotely(this.ofrep, this.baseUrl, PROBE_FLAG, {}, this.timeoutMs);
    if (answer.kind !== "answer") {
      this.healthy = false;
      throw new GeneralError(`Flagstaff at ${this.baseUrl} could not be used: ${answer.message}`);
    }
    const { status, body } = answer;
    if (status === 404 && isRecord(body) && body.errorCode === "FLAG_NOT_FOUND") return;
    if (status === 401 || status === 403) {
      throw new ProviderFatalError(
        `Flagstaff refused remote evaluation with this key. ${describeFailure(status, body)}`,
      );
    }
    if (status === 404) {
      throw new ProviderFatalError(
        `Flagstaff at ${this.baseUrl} has no OFREP endpoint. ${describeFailure(status, body)}`,
      );
    }
    this.healthy = false;
    throw new GeneralError(`Flagstaff at ${this.baseUrl} could not be used. ${describeFailure(status, body)}`);
  }

  /**
   * Evaluates a flag through OFREP (the four typed resolutions are FlagstaffResolver's): answers the
   * server's value, variant and reason, or throws an OpenFeature error.
   */
  protected async resolve<T>(
    flagKey: string,
    type: ResolvedType,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    if (typeof flagKey !== "string" || !isFlagName(flagKey)) {
      throw new FlagNotFoundError(
        `${JSON.stringify(flagKey)} is not a Flagstaff flag name (1–${FLAG_NAME_MAX_LENGTH} characters of A–Z a–z 0–9 . _ - :, ` +
          "starting with a letter or digit), so no flag has it.",
      );
    }
    const given = context ?? {};
    const ofrepContext: OfrepEvaluationContext = { ...attributesOf(given), ...actorsOf(given) };
    const answer = await evaluateRemotely(this.ofrep, this.baseUrl, flagKey, ofrepContext, this.timeoutMs);
    this.noteReachability(answer);
    if (answer.kind !== "answer") throw new GeneralError(answer.message);
    const { status, body } = answer;
    if (status !== 200) {
      const message = describeFailure(status, body);
      // OFREP failures (400, 404) carry an OpenFeature error code; the service's problem details do not.
      if (isRecord(body) && typeof body.errorCode === "string") throw errorFromCode(body.errorCode, message);
      throw new GeneralError(message);
    }
    if (
      !isRecord(body) ||
      !("value" in body) ||
      body.value === null ||
      typeof body.reason !== "string" ||
      typeof body.variant !== "string"
    ) {
      throw new ParseError(`Flagstaff answered 200 with an unexpected body: ${JSON.stringify(body)?.slice(0, 200)}`);
    }
    return resolved<T>(
      flagKey,
      type,
      { value: body.value, reason: body.reason, variant: body.variant },
      metadataOf(body.metadata),
    );
  }

  /** Emits PROVIDER_ERROR when the server stops answering (or answers 5xx) and PROVIDER_READY when it answers again. */
  private noteReachability(answer: OfrepAnswer): void {
    const reached = answer.kind === "answer" && answer.status < 500;
    if (reached === this.healthy) return;
    this.healthy = reached;
    if (reached) this.events.emit(ProviderEvents.Ready, { message: `Flagstaff at ${this.baseUrl} answers again.` });
    else {
      const message = answer.kind === "answer" ? describeFailure(answer.status, answer.body) : answer.message;
      this.events.emit(ProviderEvents.Error, { message, errorCode: ErrorCode.GENERAL });
    }
  }
}
