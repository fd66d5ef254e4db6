// The client: its options, its transport, and one API object per resource, each in its own file
// (projects.ts, keys.ts, environments.ts, flags.ts, segments.ts, actors.ts, events.ts, webhooks.ts,
// people.ts, ofrep.ts); index.ts exports them.
import { ActorsApi } from "./actors.js";
import { CheckCache } from "./check-cache.js";
import { EnvironmentsApi } from "./environments.js";
import { ChangeRequestsApi } from "./change-requests.js";
import { EventsApi } from "./events.js";
import { FlagsApi } from "./flags.js";
import { type FetchLike, Transport } from "./http.js";
import { KeysApi } from "./keys.js";
import { AccessApi, AuthApi, PersonalKeysApi, UsersApi } from "./people.js";
import { OfrepApi } from "./ofrep.js";
import { ProjectsApi } from "./projects.js";
import { SegmentsApi } from "./segments.js";
import type { HealthStatus, ReadyStatus, WhoAmI } from "./types.js";
import { WebhooksApi } from "./webhooks.js";

/** Options of a FlagstaffClient. */
export interface FlagstaffClientOptions {
  /** Where the server listens, e.g. `http://127.0.0.1:8080`; a path prefix is kept. */
  baseUrl: string;
  /** The API key sent as `Authorization: Bearer <key>`; without one only `health()` and `ready()` work. */
  apiKey?: string;
  /** Milliseconds each attempt may take before it fails with code "timeout" (default 5000; 0 for none). */
  timeoutMs?: number;
  /** Retries of GET, HEAD, PUT and DELETE after 429, 503 or a network error (default 2). POST and PATCH never. */
  retries?: number;
  /** Base of the exponential backoff: retry n waits retryDelayMs × 2^(n-1), unless Retry-After says (default 300). */
  retryDelayMs?: number;
  /** Longest wait before a retry, for backoff and for Retry-After alike (default 10000). */
  maxRetryDelayMs?: number;
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: FetchLike;
  /** Keep check answers made with `cache: N` in memory for N seconds (default false). */
  checkCache?: boolean;
  /** The clock the check cache expires answers by, in milliseconds (default `Date.now`); tests move their own. */
  now?: () => number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * The environment whose flag configurations the flag calls and the lists that depend on a configuration
   * read and change, sent as `?environment=`. Without it the server uses the key's environment, or the
   * project's default for a key bound to none. A key bound to one environment may name only its own (403).
   */
  environment?: string;
}

/** A client of the Flagstaff HTTP API, for Node.js 22.12+ and browsers (fetch only). */
export class FlagstaffClient {
  /** Projects: create, get, list, delete. */
  readonly projects: ProjectsApi;
  /** API keys: create, list, rename, revoke. */
  readonly keys: KeysApi;
  /** Environments: list, get, create, update, delete. */
  readonly environments: EnvironmentsApi;
  /** Change requests: list, create, get, update, review, apply, cancel; the schedule. */
  readonly changeRequests: ChangeRequestsApi;
  /** Flags: create, get, getWithETag, update, updateWithETag, delete, copy, copyWithETag, list, actors, explain, check, evaluate, listForActor, listForSegment. */
  readonly flags: FlagsApi;
  /** Segments: create, get, getWithETag, update, updateWithETag, delete, list, actors, listForFlag, listForActor. */
  readonly segments: SegmentsApi;
  /** Actors: get, put. */
  readonly actors: ActorsApi;
  /** The history: list, listForFlag. */
  readonly events: EventsApi;
  /** Webhooks: create, list, get, update, delete, deliveries, test. */
  readonly webhooks: WebhooksApi;
  /** People (admins): list, get, create, update, delete. */
  readonly users: UsersApi;
  /** A project's grants to people (its admins): list, grant, revoke. */
  readonly access: AccessApi;
  /** The signed-in person's own keys: list, create (in a session only), revoke. */
  readonly personalKeys: PersonalKeysApi;
  /** Signing in: methods, login, logout, signOutEverywhere. */
  readonly auth: AuthApi;
  /** OFREP, the OpenFeature Remote Evaluation Protocol (a project key): evaluate, evaluateAll. */
  readonly ofrep: OfrepApi;
  /** The environment the flag calls act on (the `environment` option); undefined: the key's, or the project's default. */
  readonly environment: string | undefined;
  private readonly http: Transport;
  private readonly checkCache: CheckCache | undefined;

  /** Creates a client; nothing is sent until an operation is called. */
  constructor(options: FlagstaffClientOptions) {
    if (typeof options?.baseUrl !== "string") throw new TypeError("FlagstaffClient needs a baseUrl");
    const { environment } = options;
    if (environment !== undefined && (typeof environment !== "string" || environment === "")) {
      throw new TypeError("FlagstaffClient's environment must be a non-empty string when given");
    }
    this.environment = environment;
    const fetchImpl: FetchLike = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.http = new Transport({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? 5000,
      retries: options.retries ?? 2,
      retryDelayMs: options.retryDelayMs ?? 300,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
      fetch: fetchImpl,
      headers: { ...(options.headers ?? {}) },
    });
    this.checkCache = options.checkCache ? new CheckCache(undefined, options.now) : undefined;
    this.projects = new ProjectsApi(this.http);
    this.keys = new KeysApi(this.http);
    this.environments = new EnvironmentsApi(this.http);
    this.changeRequests = new ChangeRequestsApi(this.http);
    this.flags = new FlagsApi(this.http, this.checkCache, environment);
    this.segments = new SegmentsApi(this.http, environment);
    this.actors = new ActorsApi(this.http);
    this.events = new EventsApi(this.http);
    this.webhooks = new WebhooksApi(this.http);
    this.users = new UsersApi(this.http);
    this.access = new AccessApi(this.http);
    this.personalKeys = new PersonalKeysApi(this.http);
    this.auth = new AuthApi(this.http);
    this.ofrep = new OfrepApi(this.http);
  }

  /** Liveness (`GET /healthz`, no key): answers `{status: "ok"}` while the server runs. */
  async health(): Promise<HealthStatus> {
    return (await this.http.request<HealthStatus>({ method: "GET", path: "/healthz", auth: false })).body;
  }

  /** The key this client uses (`GET /whoami`, any key): its id, name, role, project and environment (null for an admin key). */
  async whoami(): Promise<WhoAmI> {
    return (await this.http.request<WhoAmI>({ method: "GET", path: "/whoami" })).body;
  }

  /** Readiness (`GET /readyz`, no key, not retried): `{status: "unavailable"}` while the database does not answer. */
  async ready(): Promise<ReadyStatus> {
    const response = await this.http.request<ReadyStatus>({
      method: "GET",
      path: "/readyz",
      auth: false,
      retries: 0,
      accept: (status, body) => status === 503 && (body as { status?: unknown } | undefined)?.status === "unavailable",
    });
    return response.body;
  }

  /** Forgets every check answer held by the client-side check cache. */
  clearCheckCache(): void {
    this.checkCache?.clear();
  }
}
