import { FLAG_NAME_MAX_LENGTH, type FetchLike, FlagstaffClient, isFlagName, isFlagstaffError } from "@flagstaff/sdk";
import {
  ErrorCode,
  type EvaluationContext,
  FlagNotFoundError,
  type FlagMetadata,
  GeneralError,
  InvalidContextError,
  type JsonValue,
  type OpenFeatureError,
  OpenFeatureEventEmitter,
  ParseError,
  type Provider,
  ProviderEvents,
  ProviderFatalError,
  type ResolutionDetails,
  type ResolutionReason,
  TypeMismatchError,
  instantiateErrorByErrorCode,
} from "@openfeature/server-sdk";
import { evaluateRemotely, type OfrepAnswer, type OfrepContext } from "./ofrep.js";

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

const KNOWN_ERROR_CODES = new Set<string>(Object.values(ErrorCode));

/**
 * An answer's error code as the OpenFeature error of that code (OpenFeature's own table); anything else is
 * GENERAL. Both providers throw with it: the codes come from core's one mapping (`resolutionOf`), which
 * the server's OFREP answers and the local evaluator's evaluations are.
 */
export function errorFromCode(code: unknown, message: string): OpenFeatureError {
  return typeof code === "string" && KNOWN_ERROR_CODES.has(code)
    ? instantiateErrorByErrorCode(code as ErrorCode, message)
    : new GeneralError(message);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The actors of an evaluation context: `targetingKey` and the optional `actorIds` list, checked for type only. */
export function actorsOf(context: EvaluationContext): OfrepContext {
  const out: OfrepContext = {};
  const { targetingKey, actorIds } = context as { targetingKey?: unknown; actorIds?: unknown };
  if (targetingKey !== undefined) {
    if (typeof targetingKey !== "string") throw new InvalidContextError("targetingKey must be a string.");
    out.targetingKey = targetingKey;
  }
  if (actorIds !== undefined) {
    if (!Array.isArray(actorIds) || !actorIds.every((id) => typeof id === "string")) {
      throw new InvalidContextError("actorIds must be an array of strings.");
    }
    out.actorIds = [...actorIds];
  }
  return out;
}

/**
 * The context's attributes, which the flag's rules read: every member but `targetingKey` and `actorIds`.
 * A Date is sent as its ISO 8601 text (as JSON would), so `before`/`after` rules read it alike locally and
 * on the server. Undefined when there are none.
 */
export function attributesOf(context: EvaluationContext): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(context)) {
    if (name === "targetingKey" || name === "actorIds" || value === undefined) continue;
    out ??= Object.create(null) as Record<string, unknown>;
    out[name] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

/** The OpenFeature flag types a Flagstaff flag may be resolved as. */
export type ResolvedType = "boolean" | "string" | "number" | "object";

/** Whether a served value is of the type asked for (object: a JSON object or array). */
export function isOfType(value: unknown, type: ResolvedType): boolean {
  return type === "object" ? typeof value === "object" && value !== null : typeof value === type;
}

const typeOfValue = (value: unknown): string =>
  Array.isArray(value) ? "an array (object)" : typeof value === "object" ? "an object" : `a ${typeof value}`;

/** A flag that serves another type than the one asked for: TYPE_MISMATCH (the caller gets its default). */
export function typeMismatch(flagKey: string, type: string, value?: unknown): TypeMismatchError {
  const served = value === undefined ? "" : ` serves ${typeOfValue(value)} and`;
  return new TypeMismatchError(
    `Flag ${JSON.stringify(flagKey)}${served} cannot be evaluated as ${type === "object" ? "an" : "a"} ${type}.`,
  );
}

/**
 * A successful answer (OFREP's, or the local evaluator's) as OpenFeature's resolution details: its value,
 * variant and reason; a value of another type than the one asked for is TYPE_MISMATCH. Both providers
 * answer with it.
 */
export function resolved<T>(
  flagKey: string,
  type: ResolvedType,
  answer: { readonly value: unknown; readonly reason: string; readonly variant: string },
  flagMetadata: FlagMetadata,
): ResolutionDetails<T> {
  if (!isOfType(answer.value, type)) throw typeMismatch(flagKey, type, answer.value);
  return { value: answer.value as T, reason: answer.reason as ResolutionReason, variant: answer.variant, flagMetadata };
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
export class FlagstaffProvider implements Provider {
  /** Flagstaff answers over the network, once per evaluation: this provider is for servers. */
  readonly runsOn = "server" as const;
  /** The provider's name, as OpenFeature reports it. */
  readonly metadata = { name: "flagstaff" } as const;
  /** PROVIDER_ERROR when the server stops answering, PROVIDER_READY when it answers again. */
  readonly events = new OpenFeatureEventEmitter();

  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly projectId: string;
  private readonly timeoutMs: number;
  private readonly fetch: FetchLike;
  private readonly client: FlagstaffClient;
  /** False after the server failed to answer (or answered 5xx), until an evaluation gets an answer again. */
  private healthy = true;

  /** Creates a provider; nothing is sent until `initialize()` or the first evaluation. */
  constructor(options: FlagstaffProviderOptions) {
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
    this.fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.client =
      options.client ??
      new FlagstaffClient({ baseUrl: this.baseUrl, apiKey: this.apiKey, timeoutMs, fetch: this.fetch });
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
    const answer = await evaluateRemotely(this.settings(), PROBE_FLAG, {});
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
   * Evaluates a boolean flag for the context's actors (`targetingKey`, plus the optional `actorIds` list;
   * any one enables it) and attributes (every other member), through OFREP. Answers the server's value,
   * variant and reason; on any failure it throws an OpenFeature error, which the OpenFeature client turns
   * into the default value with that error code (a flag of another type: TYPE_MISMATCH).
   */
  async resolveBooleanEvaluation(
    flagKey: string,
    _defaultValue: boolean,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<boolean>> {
    return this.resolve<boolean>(flagKey, "boolean", context);
  }

  /** Evaluates a string flag, as `resolveBooleanEvaluation` does a boolean one. */
  async resolveStringEvaluation(
    flagKey: string,
    _defaultValue: string,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<string>> {
    return this.resolve<string>(flagKey, "string", context);
  }

  /** Evaluates a number flag, as `resolveBooleanEvaluation` does a boolean one. */
  async resolveNumberEvaluation(
    flagKey: string,
    _defaultValue: number,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<number>> {
    return this.resolve<number>(flagKey, "number", context);
  }

  /** Evaluates an object flag (a JSON object or array), as `resolveBooleanEvaluation` does a boolean one. */
  async resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    _defaultValue: T,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    return this.resolve<T>(flagKey, "object", context);
  }

  private async resolve<T>(
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
    const ofrepContext: OfrepContext = { ...attributesOf(given), ...actorsOf(given) };
    const answer = await evaluateRemotely(this.settings(), flagKey, ofrepContext);
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

  private settings() {
    return { baseUrl: this.baseUrl, apiKey: this.apiKey, timeoutMs: this.timeoutMs, fetch: this.fetch };
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
