import { type AttributeValue, createLocalEvaluator, type FetchLike, type LocalEvaluator } from "@flagstaff/sdk";
import {
  ErrorCode,
  type EvaluationContext,
  GeneralError,
  ProviderEvents,
  ProviderFatalError,
  ProviderNotReadyError,
  type ResolutionDetails,
} from "@openfeature/server-sdk";
import { actorsOf, attributesOf, errorFromCode, FlagstaffResolver, type ResolvedType, resolved } from "./resolvers.js";

/** Options of a FlagstaffInProcessProvider. */
export interface FlagstaffInProcessProviderOptions {
  /** Where the Flagstaff server listens, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A project key of role `read` (or `write`): the project's state carries targeting data. */
  apiKey: string;
  /** The project to evaluate. */
  projectId: string;
  /** How long `initialize()` waits for the project's state (default 10000). */
  readyTimeoutMs?: number;
  /** The fetch to use (default `globalThis.fetch`); it must stream response bodies. */
  fetch?: FetchLike;
  /** Uniform numbers in [0, 1) for the call rollout (default `Math.random`). */
  random?: () => number;
  /** The evaluation time rules read as `$now`, in milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /** Ask for a compressed stream (the SDK's LocalEvaluatorOptions.compressStream; default: on with the default fetch on Node.js). */
  compressStream?: boolean;
  /** Report the evaluations made here every minute, for the console's usage chart and the stale rules (default true). */
  reportUsage?: boolean;
  /** Milliseconds between usage reports (default 60000). */
  usageIntervalMs?: number;
}

const DEFAULT_READY_TIMEOUT_MS = 10_000;

/**
 * An OpenFeature server provider that evaluates Flagstaff's flags (boolean, string, number and object) in
 * this process: it follows the project's stream with the SDK's local evaluator and answers from memory,
 * with the server's own rules (core's `evaluateFlag`: the same value, variant and reason as OFREP), the
 * context's attributes read by the flags' rules. Events: PROVIDER_READY once the state is loaded
 * (and again after a reconnection), PROVIDER_CONFIGURATION_CHANGED with the flags that may answer
 * differently, PROVIDER_STALE while the stream is down (answers come from the last state), and
 * PROVIDER_ERROR when the key is refused (fatal).
 */
export class FlagstaffInProcessProvider extends FlagstaffResolver {
  readonly metadata = { name: "flagstaff-in-process" } as const;

  private readonly options: FlagstaffInProcessProviderOptions;
  private evaluator: LocalEvaluator | undefined;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(options: FlagstaffInProcessProviderOptions) {
    super();
    for (const name of ["baseUrl", "apiKey", "projectId"] as const) {
      if (typeof options?.[name] !== "string" || options[name] === "") {
        throw new TypeError(`FlagstaffInProcessProvider needs a ${name}`);
      }
    }
    this.options = options;
  }

  /** Loads the project's state; a refused key or an unknown project fails with PROVIDER_FATAL. */
  async initialize(): Promise<void> {
    const evaluator = createLocalEvaluator({
      url: this.options.baseUrl,
      key: this.options.apiKey,
      projectId: this.options.projectId,
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
      ...(this.options.random ? { random: this.options.random } : {}),
      ...(this.options.now ? { now: this.options.now } : {}),
      ...(this.options.compressStream === undefined ? {} : { compressStream: this.options.compressStream }),
      ...(this.options.reportUsage === undefined ? {} : { reportUsage: this.options.reportUsage }),
      ...(this.options.usageIntervalMs === undefined ? {} : { usageIntervalMs: this.options.usageIntervalMs }),
    });
    this.evaluator = evaluator;
    let stale = false;
    this.unsubscribe.push(
      evaluator.on("change", (change) => {
        this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged: [...change.flags] });
      }),
      evaluator.on("status", (status) => {
        if (status === "reconnecting" && !stale) {
          stale = true;
          this.events.emit(ProviderEvents.Stale, { message: "The stream dropped; answering from the last state." });
        } else if ((status === "streaming" || status === "polling") && stale) {
          stale = false;
          this.events.emit(ProviderEvents.Ready, { message: "Following the project's stream again." });
        }
      }),
      evaluator.on("error", ({ error, fatal }) => {
        if (fatal)
          this.events.emit(ProviderEvents.Error, { message: error.message, errorCode: ErrorCode.PROVIDER_FATAL });
      }),
    );
    try {
      await evaluator.ready(this.options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (evaluator.error) throw new ProviderFatalError(`Flagstaff refused the project's stream: ${message}`);
      throw new GeneralError(`Flagstaff's project stream is not ready: ${message}`);
    }
  }

  async onClose(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    this.evaluator?.close();
  }

  /**
   * Evaluates a flag from memory (the four typed resolutions are FlagstaffResolver's), for the context's
   * actors (`targetingKey`, plus the optional `actorIds` list) and attributes (every other member).
   */
  protected resolve<T>(flagKey: string, type: ResolvedType, context: EvaluationContext): ResolutionDetails<T> {
    const evaluator = this.evaluator;
    if (!evaluator) throw new ProviderNotReadyError("The provider has not been initialized.");
    const given = context ?? {};
    const { targetingKey, actorIds = [] } = actorsOf(given);
    const actors = targetingKey === undefined ? actorIds : [targetingKey, ...actorIds];
    const attributes = attributesOf(given) as Record<string, AttributeValue> | undefined;
    const result = evaluator.evaluate(flagKey, { actorIds: actors, attributes });
    if (result.reason === "ERROR") throw errorFromCode(result.errorCode, result.errorMessage);
    return resolved<T>(flagKey, type, result, { version: evaluator.version });
  }
}
