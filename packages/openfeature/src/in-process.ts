import { createLocalEvaluator, type FetchLike, type LocalEvaluator } from "@flagstaff/sdk";
import {
  ErrorCode,
  type EvaluationContext,
  FlagNotFoundError,
  GeneralError,
  InvalidContextError,
  type JsonValue,
  OpenFeatureEventEmitter,
  type Provider,
  ProviderEvents,
  ProviderFatalError,
  ProviderNotReadyError,
  type ResolutionDetails,
  type ResolutionReason,
} from "@openfeature/server-sdk";
import { actorsOf, typeMismatch } from "./provider.js";

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
}

const DEFAULT_READY_TIMEOUT_MS = 10_000;

/**
 * An OpenFeature server provider that evaluates Flagstaff's boolean flags in this process: it follows the
 * project's stream with the SDK's local evaluator and answers from memory, with the server's own rules
 * (the same `enabled` and reason as the server's check). Events: PROVIDER_READY once the state is loaded
 * (and again after a reconnection), PROVIDER_CONFIGURATION_CHANGED with the flags that may answer
 * differently, PROVIDER_STALE while the stream is down (answers come from the last state), and
 * PROVIDER_ERROR when the key is refused (fatal).
 */
export class FlagstaffInProcessProvider implements Provider {
  readonly runsOn = "server" as const;
  readonly metadata = { name: "flagstaff-in-process" } as const;
  readonly events = new OpenFeatureEventEmitter();

  private readonly options: FlagstaffInProcessProviderOptions;
  private evaluator: LocalEvaluator | undefined;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(options: FlagstaffInProcessProviderOptions) {
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

  /** Evaluates from memory for the context's actors (`targetingKey`, plus the optional `actorIds` list). */
  async resolveBooleanEvaluation(
    flagKey: string,
    _defaultValue: boolean,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<boolean>> {
    const evaluator = this.evaluator;
    if (!evaluator) throw new ProviderNotReadyError("The provider has not been initialized.");
    const { targetingKey, actorIds = [] } = actorsOf(context ?? {});
    const actors = targetingKey === undefined ? actorIds : [targetingKey, ...actorIds];
    const result = evaluator.evaluate(flagKey, actors);
    if (result.reason === "ERROR") {
      if (result.errorCode === "FLAG_NOT_FOUND") throw new FlagNotFoundError(result.errorMessage);
      if (result.errorCode === "INVALID_CONTEXT") throw new InvalidContextError(result.errorMessage);
      throw new ProviderNotReadyError(result.errorMessage);
    }
    return {
      value: result.enabled,
      reason: result.reason as ResolutionReason,
      variant: result.enabled ? "on" : "off",
      flagMetadata: { version: evaluator.version },
    };
  }

  async resolveStringEvaluation(flagKey: string): Promise<ResolutionDetails<string>> {
    throw typeMismatch(flagKey, "string");
  }

  async resolveNumberEvaluation(flagKey: string): Promise<ResolutionDetails<number>> {
    throw typeMismatch(flagKey, "number");
  }

  async resolveObjectEvaluation<T extends JsonValue>(flagKey: string): Promise<ResolutionDetails<T>> {
    throw typeMismatch(flagKey, "object");
  }
}
