import { queryAttributeParameter } from "@flagstaff/core";
import { CheckCache } from "./check-cache.js";
import { FlagstaffError } from "./errors.js";
import { type FetchLike, type QueryValue, Transport, type TransportResponse } from "./http.js";
import { PageList } from "./pagination.js";
import { param, pageQuery } from "./params.js";
import { AccessApi, AuthApi, PersonalKeysApi, UsersApi } from "./people.js";
import type {
  Actor,
  ActorMembership,
  ActorMembershipListOptions,
  ActorProfile,
  ApiKey,
  CheckAttributes,
  CheckOptions,
  CheckResult,
  CopyFlagInput,
  CreatedApiKey,
  CreateEnvironmentInput,
  CreateFlagInput,
  CreateKeyInput,
  CreateProjectInput,
  CreateSegmentInput,
  CreatedWebhook,
  CreateWebhookInput,
  DeliveryListOptions,
  Environment,
  EventListOptions,
  ExplainOptions,
  Flag,
  FlagExplanation,
  FlagstaffEvent,
  FlagListOptions,
  HealthStatus,
  ListOptions,
  Page,
  Project,
  ReadyStatus,
  Segment,
  Tagged,
  UpdateEnvironmentInput,
  UpdateFlagInput,
  UpdateSegmentInput,
  UpdateWebhookInput,
  VariantValue,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryWithPayload,
  WhoAmI,
  WriteOptions,
} from "./types.js";

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

/**
 * An attribute as the query carries it: a value as text, or a list of texts (an empty list carries
 * nothing, so the server reads it as a missing attribute).
 */
type QueryAttribute = readonly [name: string, value: string | readonly string[]];

/** The attributes given, as [name, value] pairs, values as text, lists kept lists; null and undefined ones left out. */
function attributeEntries(attributes: CheckAttributes | undefined): QueryAttribute[] {
  if (attributes === undefined || attributes === null) return [];
  if (typeof attributes !== "object" || Array.isArray(attributes)) {
    throw new FlagstaffError({
      status: 0,
      code: "invalid_argument",
      detail: "attributes must be an object of attribute names to values.",
    });
  }
  const out: QueryAttribute[] = [];
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) out.push([name, value.map(String)]);
    else if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      out.push([name, String(value)]);
    } else {
      throw new FlagstaffError({
        status: 0,
        code: "invalid_argument",
        detail: `Attribute ${JSON.stringify(name)} must be a string, a number, a boolean or a list of strings.`,
      });
    }
  }
  return out;
}

/**
 * Attributes as query parameters, in the contract's grammar (@flagstaff/core, query-attributes.ts):
 * `attributes[NAME]=value` for a value, `attributes[NAME][]=element` for each element of a list, so a
 * list of one stays a list.
 */
function attributeQuery(entries: readonly QueryAttribute[]): Record<string, QueryValue> {
  const query: Record<string, QueryValue> = {};
  for (const [name, value] of entries) query[queryAttributeParameter(name, typeof value !== "string")] = value;
  return query;
}

/** Whether `explain`'s second argument is the seed's list of actor ids (rather than options). */
const isActorList = (value: readonly string[] | ExplainOptions): value is readonly string[] => Array.isArray(value);

/** The `if-match` header of a write, when an ETag is given. */
const ifMatchHeader = (options: WriteOptions | undefined): Record<string, string> | undefined =>
  options?.ifMatch === undefined ? undefined : { "if-match": options.ifMatch };

/** The answer's body with its ETag; a server that sends none is an invalid response for these calls. */
function tagged<T>(response: TransportResponse<T>, what: string): Tagged<T> {
  const etag = response.headers.get("etag");
  if (etag === null || etag === "") {
    throw new FlagstaffError({
      status: response.status,
      code: "invalid_response",
      detail: `The server answered ${what} without an ETag header.`,
    });
  }
  return { value: response.body, etag };
}

/** Projects (admin key, except `get`, which a read key of the project may use). */
export class ProjectsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /** Creates a project (`POST /projects`); 409 project_exists when the id is taken. */
  async create(input: CreateProjectInput): Promise<Project> {
    return (await this.http.request<Project>({ method: "POST", path: "/projects", body: input })).body;
  }

  /** Retrieves a project (`GET /projects/{projectId}`). */
  async get(projectId: string): Promise<Project> {
    const path = `/projects/${param("projectId", projectId)}`;
    return (await this.http.request<Project>({ method: "GET", path })).body;
  }

  /** Lists every project by id (`GET /projects`): iterate it, or call `.page()`. */
  list(options: ListOptions = {}): PageList<Project> {
    return new PageList(
      async (page) =>
        (await this.http.request<Page<Project>>({ method: "GET", path: "/projects", query: pageQuery(page) })).body,
      options.limit,
    );
  }

  /** Deletes a project with everything in it, keys included (`DELETE /projects/{projectId}`). */
  async delete(projectId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: `/projects/${param("projectId", projectId)}` });
  }
}

/** API keys of a project (admin key). */
export class KeysApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /** Creates a key (`POST /projects/{projectId}/keys`); the answer holds the secret, shown only this once. */
  async create(projectId: string, input: CreateKeyInput): Promise<CreatedApiKey> {
    const path = `/projects/${param("projectId", projectId)}/keys`;
    return (await this.http.request<CreatedApiKey>({ method: "POST", path, body: input })).body;
  }

  /** Lists the project's keys, oldest first, without secrets (`GET /projects/{projectId}/keys`). */
  list(projectId: string, options: ListOptions = {}): PageList<ApiKey> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/keys`;
      return (await this.http.request<Page<ApiKey>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }

  /**
   * Renames a key (`PATCH /projects/{projectId}/keys/{keyId}`): its label only, recorded as `key.updated`;
   * the history names the key's later changes so. 404 `key_not_found`.
   */
  async rename(projectId: string, keyId: string, name: string): Promise<ApiKey> {
    const path = `/projects/${param("projectId", projectId)}/keys/${param("keyId", keyId)}`;
    return (await this.http.request<ApiKey>({ method: "PATCH", path, body: { name } })).body;
  }

  /** Revokes a key at once (`DELETE /projects/{projectId}/keys/{keyId}`). */
  async revoke(projectId: string, keyId: string): Promise<void> {
    const path = `/projects/${param("projectId", projectId)}/keys/${param("keyId", keyId)}`;
    await this.http.request<void>({ method: "DELETE", path });
  }
}

/**
 * Flags of a project, and the check. Every call but `copy` acts on the client's `environment` (the key's,
 * or the project's default, when it names none): a flag's status, percentages, attachments and ETag are
 * those of its configuration in that environment.
 */
export class FlagsApi {
  /** @internal */
  constructor(
    private readonly http: Transport,
    private readonly cache: CheckCache | undefined,
    private readonly environment: string | undefined,
  ) {}

  private path(projectId: string, flagName: string): string {
    return `/projects/${param("projectId", projectId)}/flags/${param("flagName", flagName)}`;
  }

  /** The client's environment as the query parameter; left out when it names none. */
  private get scope(): Record<string, QueryValue> {
    return { environment: this.environment };
  }

  /**
   * Creates a flag, disabled and at 0 % in every environment (`POST /projects/{projectId}/flags/{flagName}`);
   * 409 flag_exists. `type` (default boolean) is fixed for its life; a string, number or object flag
   * declares 2–50 `variants`, and `onVariant`/`offVariant` (default the first and the second) hold in every
   * environment. A refused variant is a 400 whose `errors` name it.
   */
  async create(projectId: string, flagName: string, input: CreateFlagInput = {}): Promise<Flag> {
    const path = this.path(projectId, flagName);
    return (await this.http.request<Flag>({ method: "POST", path, query: this.scope, body: input })).body;
  }

  /** Retrieves a flag by name (`GET /projects/{projectId}/flags/{flagName}`). */
  async get(projectId: string, flagName: string): Promise<Flag> {
    return (await this.read(projectId, flagName)).body;
  }

  /** Retrieves a flag with its ETag (its configuration's in the client's environment), for `ifMatch` on a later write. */
  async getWithETag(projectId: string, flagName: string): Promise<Tagged<Flag>> {
    return tagged(await this.read(projectId, flagName), "the flag");
  }

  private read(projectId: string, flagName: string) {
    return this.http.request<Flag>({ method: "GET", path: this.path(projectId, flagName), query: this.scope });
  }

  /**
   * Changes fields and attachments in one transaction (`PATCH /projects/{projectId}/flags/{flagName}`):
   * in the client's environment `onVariant`, `offVariant`, `rules` and `prerequisites` (each replaced
   * whole), and the flag's `variants` (every environment; not a boolean flag's). A rule the validator
   * refuses is a 400 whose `errors` name the rule and condition; a prerequisite cycle 409
   * `prerequisite_cycle`; removing a variant still in use 409 `variant_in_use`. With `ifMatch`, only while
   * the flag is still at that ETag: 412 `precondition_failed` otherwise.
   */
  async update(projectId: string, flagName: string, input: UpdateFlagInput, options?: WriteOptions): Promise<Flag> {
    return (await this.patch(projectId, flagName, input, options)).body;
  }

  /** `update`, answering the flag with its new ETag. */
  async updateWithETag(
    projectId: string,
    flagName: string,
    input: UpdateFlagInput,
    options?: WriteOptions,
  ): Promise<Tagged<Flag>> {
    return tagged(await this.patch(projectId, flagName, input, options), "the flag");
  }

  private patch(projectId: string, flagName: string, input: UpdateFlagInput, options: WriteOptions | undefined) {
    const path = this.path(projectId, flagName);
    const headers = ifMatchHeader(options);
    return this.http.request<Flag>({ method: "PATCH", path, query: this.scope, body: input, headers });
  }

  /**
   * Deletes a flag with its attachments, in every environment (`DELETE /projects/{projectId}/flags/{flagName}`);
   * with `ifMatch`, only while the flag is still at that ETag.
   */
  async delete(projectId: string, flagName: string, options?: WriteOptions): Promise<void> {
    const path = this.path(projectId, flagName);
    await this.http.request<void>({ method: "DELETE", path, query: this.scope, headers: ifMatchHeader(options) });
  }

  /**
   * Copies the flag's configuration (status, percentages, attached actors and segments, on and off
   * variants, rules and prerequisites) from environment
   * `from` to environment `to`, replacing `to`'s, in one write (`POST …/flags/{flagName}/copy`); answers the
   * flag as it is in `to`. With `ifMatch`, only while `to`'s configuration is still at that ETag. `from`
   * and `to` name the environments: the client's `environment` plays no part. 400 when they are the same.
   */
  async copy(projectId: string, flagName: string, input: CopyFlagInput, options?: WriteOptions): Promise<Flag> {
    return (await this.postCopy(projectId, flagName, input, options)).body;
  }

  /** `copy`, answering the flag with the new ETag of its configuration in `to`. */
  async copyWithETag(
    projectId: string,
    flagName: string,
    input: CopyFlagInput,
    options?: WriteOptions,
  ): Promise<Tagged<Flag>> {
    return tagged(await this.postCopy(projectId, flagName, input, options), "the flag");
  }

  private postCopy(projectId: string, flagName: string, input: CopyFlagInput, options: WriteOptions | undefined) {
    const path = `${this.path(projectId, flagName)}/copy`;
    return this.http.request<Flag>({ method: "POST", path, body: input, headers: ifMatchHeader(options) });
  }

  /**
   * Lists the actors attached to the flag directly, by actor id, optionally those whose id contains `q`
   * (`GET …/flags/{flagName}/actors`).
   */
  actors(projectId: string, flagName: string, options: ActorMembershipListOptions = {}): PageList<ActorMembership> {
    return new PageList(async (page) => {
      const path = `${this.path(projectId, flagName)}/actors`;
      const query = { q: options.q, ...this.scope, ...pageQuery(page) };
      return (await this.http.request<Page<ActorMembership>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /**
   * Explains the flag's answer for these actors (0–100) and context attributes by the check's rules,
   * without recording a check (`GET …/flags/{flagName}/explain`): the variant served and why (the status,
   * an actor, a segment, a rule with its conditions, a failed prerequisite, the actor rollout), buckets and
   * threshold. The second argument is the actor ids, or `{actorIds, attributes}`.
   */
  async explain(
    projectId: string,
    flagName: string,
    context: readonly string[] | ExplainOptions = [],
  ): Promise<FlagExplanation> {
    const { actorIds = [], attributes } = isActorList(context) ? { actorIds: context } : context;
    const path = `${this.path(projectId, flagName)}/explain`;
    const query = {
      actorIds: actorIds.length > 0 ? actorIds : undefined,
      ...attributeQuery(attributeEntries(attributes)),
      ...this.scope,
    };
    return (await this.http.request<FlagExplanation>({ method: "GET", path, query })).body;
  }

  /**
   * Lists the project's flags by name (or by `sort`), optionally filtered by `name`, `q` and `status`
   * (`GET /projects/{projectId}/flags`); with `total: true` each page also says how many match.
   */
  list(projectId: string, options: FlagListOptions = {}): PageList<Flag> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/flags`;
      const { name, q, status, sort } = options;
      const total = options.total ? "true" : undefined;
      const query = { name, q, status, sort, total, ...this.scope, ...pageQuery(page) };
      return (await this.http.request<Page<Flag>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /**
   * Answers whether the flag is on, optionally for any of `actorIds` and with context `attributes` for its
   * rules (`GET …/flags/{flagName}/check`). For a flag that is not boolean, "on" means it serves anything
   * but its offVariant; `evaluate` answers the variant and its value as well.
   */
  async check(projectId: string, flagName: string, options: CheckOptions = {}): Promise<boolean> {
    return (await this.evaluate(projectId, flagName, options)).enabled;
  }

  /**
   * Evaluates the flag for `actorIds` and `attributes` (`GET …/flags/{flagName}/check`): whether it is on,
   * the variant it serves and that variant's value (a boolean flag: `on` with true, `off` with false).
   * With `checkCache` and `cache: N` the answer is reused for N seconds, as `check`'s.
   */
  async evaluate(projectId: string, flagName: string, options: CheckOptions = {}): Promise<CheckResult> {
    const { actorIds, cache } = options;
    const attributes = attributeEntries(options.attributes);
    const ttlMs = this.cache && cache !== undefined && cache > 0 ? Math.floor(cache) * 1000 : 0;
    const key = ttlMs > 0 ? CheckCache.key(projectId, flagName, actorIds, attributes, this.environment) : undefined;
    if (key !== undefined) {
      const cached = this.cache?.get(key);
      if (cached !== undefined) return { ...cached };
    }
    const response = await this.http.request<{ enabled: boolean; variant?: unknown; value?: unknown }>({
      method: "GET",
      path: `${this.path(projectId, flagName)}/check`,
      query: {
        actorIds: actorIds && actorIds.length > 0 ? actorIds : undefined,
        ...attributeQuery(attributes),
        cache,
        ...this.scope,
      },
    });
    const body = response.body;
    const enabled = body?.enabled;
    if (typeof enabled !== "boolean") {
      throw new FlagstaffError({
        status: response.status,
        code: "invalid_response",
        detail: "The check answer has no boolean `enabled`.",
      });
    }
    let answer: CheckResult;
    if (body.variant === undefined) {
      // A boolean flag's answer: `{"enabled": …}` alone.
      answer = { enabled, variant: enabled ? "on" : "off", value: enabled };
    } else if (body.variant === null || typeof body.variant === "string") {
      answer = { enabled, variant: body.variant, value: (body.value ?? null) as VariantValue | null };
    } else {
      throw new FlagstaffError({
        status: response.status,
        code: "invalid_response",
        detail: "The check answer's `variant` is neither a string nor null.",
      });
    }
    if (key !== undefined) this.cache?.set(key, answer, ttlMs);
    return { ...answer };
  }

  /** Lists the flags on for an actor by the deterministic rules (`GET …/actors/{actorId}/flags`). */
  listForActor(projectId: string, actorId: string, options: ListOptions = {}): PageList<Flag> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/actors/${param("actorId", actorId)}/flags`;
      const query = { ...this.scope, ...pageQuery(page) };
      return (await this.http.request<Page<Flag>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /** Lists the flags on for every member of a segment (`GET …/segments/{segmentId}/flags`). */
  listForSegment(projectId: string, segmentId: string, options: ListOptions = {}): PageList<Flag> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/segments/${param("segmentId", segmentId)}/flags`;
      const query = { ...this.scope, ...pageQuery(page) };
      return (await this.http.request<Page<Flag>>({ method: "GET", path, query })).body;
    }, options.limit);
  }
}

/** Segments of a project: project-wide, the same in every environment (only `listForFlag` depends on one). */
export class SegmentsApi {
  /** @internal */
  constructor(
    private readonly http: Transport,
    private readonly environment: string | undefined,
  ) {}

  private path(projectId: string, segmentId: string): string {
    return `/projects/${param("projectId", projectId)}/segments/${param("segmentId", segmentId)}`;
  }

  /**
   * Creates a segment (`POST /projects/{projectId}/segments`); 409 segment_exists when the name is taken.
   * With `conditions`, a context whose conditions all hold is in it too, beside its listed members.
   */
  async create(projectId: string, input: CreateSegmentInput): Promise<Segment> {
    const path = `/projects/${param("projectId", projectId)}/segments`;
    return (await this.http.request<Segment>({ method: "POST", path, body: input })).body;
  }

  /** Retrieves a segment by id (`GET /projects/{projectId}/segments/{segmentId}`). */
  async get(projectId: string, segmentId: string): Promise<Segment> {
    return (await this.http.request<Segment>({ method: "GET", path: this.path(projectId, segmentId) })).body;
  }

  /** Retrieves a segment with its ETag, for `ifMatch` on a later `update` or `delete`. */
  async getWithETag(projectId: string, segmentId: string): Promise<Tagged<Segment>> {
    const response = await this.http.request<Segment>({ method: "GET", path: this.path(projectId, segmentId) });
    return tagged(response, "the segment");
  }

  /**
   * Renames, describes, adds and removes members, and replaces the `conditions` ([]: listed members only),
   * in one transaction (`PATCH …/segments/{segmentId}`).
   * With `ifMatch`, only while the segment is still at that ETag: 412 `precondition_failed` otherwise.
   */
  async update(
    projectId: string,
    segmentId: string,
    input: UpdateSegmentInput,
    options?: WriteOptions,
  ): Promise<Segment> {
    return (await this.patch(projectId, segmentId, input, options)).body;
  }

  /** `update`, answering the segment with its new ETag. */
  async updateWithETag(
    projectId: string,
    segmentId: string,
    input: UpdateSegmentInput,
    options?: WriteOptions,
  ): Promise<Tagged<Segment>> {
    return tagged(await this.patch(projectId, segmentId, input, options), "the segment");
  }

  private patch(projectId: string, segmentId: string, input: UpdateSegmentInput, options: WriteOptions | undefined) {
    const path = this.path(projectId, segmentId);
    return this.http.request<Segment>({ method: "PATCH", path, body: input, headers: ifMatchHeader(options) });
  }

  /**
   * Deletes a segment and detaches it from every flag (`DELETE …/segments/{segmentId}`); with `ifMatch`,
   * only while the segment is still at that ETag.
   */
  async delete(projectId: string, segmentId: string, options?: WriteOptions): Promise<void> {
    const path = this.path(projectId, segmentId);
    await this.http.request<void>({ method: "DELETE", path, headers: ifMatchHeader(options) });
  }

  /**
   * Lists the segment's members, by actor id, optionally those whose id contains `q`
   * (`GET …/segments/{segmentId}/actors`); a million members page as fast as ten.
   */
  actors(projectId: string, segmentId: string, options: ActorMembershipListOptions = {}): PageList<ActorMembership> {
    return new PageList(async (page) => {
      const path = `${this.path(projectId, segmentId)}/actors`;
      const query = { q: options.q, ...pageQuery(page) };
      return (await this.http.request<Page<ActorMembership>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /** Lists the project's segments by name (`GET /projects/{projectId}/segments`). */
  list(projectId: string, options: ListOptions = {}): PageList<Segment> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/segments`;
      return (await this.http.request<Page<Segment>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }

  /** Lists the segments attached to a flag in the client's environment (`GET …/flags/{flagName}/segments`). */
  listForFlag(projectId: string, flagName: string, options: ListOptions = {}): PageList<Segment> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/flags/${param("flagName", flagName)}/segments`;
      const query = { environment: this.environment, ...pageQuery(page) };
      return (await this.http.request<Page<Segment>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /** Lists the segments an actor is a member of (`GET …/actors/{actorId}/segments`). */
  listForActor(projectId: string, actorId: string, options: ListOptions = {}): PageList<Segment> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/actors/${param("actorId", actorId)}/segments`;
      return (await this.http.request<Page<Segment>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }
}

/** Actors of a project. */
export class ActorsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private path(projectId: string, actorId: string): string {
    return `/projects/${param("projectId", projectId)}/actors/${param("actorId", actorId)}`;
  }

  /** Retrieves an actor (`GET /projects/{projectId}/actors/{actorId}`); 404 actor_not_found if never seen. */
  async get(projectId: string, actorId: string): Promise<Actor> {
    return (await this.http.request<Actor>({ method: "GET", path: this.path(projectId, actorId) })).body;
  }

  /** Creates the actor or replaces its whole profile; fields left out become null (`PUT …/actors/{actorId}`). */
  async put(projectId: string, actorId: string, profile: ActorProfile = {}): Promise<Actor> {
    const path = this.path(projectId, actorId);
    return (await this.http.request<Actor>({ method: "PUT", path, body: profile })).body;
  }
}

const typeQuery = (type: EventListOptions["type"]): QueryValue =>
  type === undefined ? undefined : typeof type === "string" ? [type] : type;

/** A project's history (read key): who changed what, when, and from what; newest first. */
export class EventsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  /** Lists a project's events, newest first, with optional filters (`GET /projects/{projectId}/events`). */
  list(projectId: string, options: EventListOptions = {}): PageList<FlagstaffEvent> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/events`;
      const query = {
        type: typeQuery(options.type),
        flag: options.flag,
        segment: options.segment,
        since: options.since,
        until: options.until,
        actor: options.actor,
        environment: options.environment,
        ...pageQuery(page),
      };
      return (await this.http.request<Page<FlagstaffEvent>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /**
   * Lists the events of every flag that had this name, newest first, deletes and re-creates included
   * (`GET /projects/{projectId}/flags/{flagName}/events`); `target.id` tells the flags apart.
   */
  listForFlag(
    projectId: string,
    flagName: string,
    options: Omit<EventListOptions, "flag" | "segment"> = {},
  ): PageList<FlagstaffEvent> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/flags/${param("flagName", flagName)}/events`;
      const { since, until, environment } = options;
      const query = { type: typeQuery(options.type), since, until, environment, ...pageQuery(page) };
      return (await this.http.request<Page<FlagstaffEvent>>({ method: "GET", path, query })).body;
    }, options.limit);
  }
}

/**
 * Environments of a project (development, staging, production…): each holds its own configuration of every
 * flag. Any key of the project lists and reads them; only an admin key creates, changes and deletes them.
 */
export class EnvironmentsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private path(projectId: string, environmentId: string): string {
    return `/projects/${param("projectId", projectId)}/environments/${param("environmentId", environmentId)}`;
  }

  /** Lists the project's environments in their order (`GET /projects/{projectId}/environments`). */
  list(projectId: string, options: ListOptions = {}): PageList<Environment> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/environments`;
      return (await this.http.request<Page<Environment>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }

  /** Retrieves an environment (`GET …/environments/{environmentId}`); 404 environment_not_found. */
  async get(projectId: string, environmentId: string): Promise<Environment> {
    return (await this.http.request<Environment>({ method: "GET", path: this.path(projectId, environmentId) })).body;
  }

  /**
   * Creates an environment (`POST /projects/{projectId}/environments`): every flag starts disabled in it,
   * or as in `copyFrom`. 409 `environment_exists` when the id is taken, `environment_limit` past the most
   * a project may have; 404 `environment_not_found` for an unknown `copyFrom`.
   */
  async create(projectId: string, input: CreateEnvironmentInput): Promise<Environment> {
    const path = `/projects/${param("projectId", projectId)}/environments`;
    return (await this.http.request<Environment>({ method: "POST", path, body: input })).body;
  }

  /** Renames or describes an environment, or makes it the default with `default: true` (`PATCH …/environments/{environmentId}`). */
  async update(projectId: string, environmentId: string, input: UpdateEnvironmentInput): Promise<Environment> {
    const path = this.path(projectId, environmentId);
    return (await this.http.request<Environment>({ method: "PATCH", path, body: input })).body;
  }

  /**
   * Deletes an environment with its flag configurations, and revokes the keys bound to it
   * (`DELETE …/environments/{environmentId}`). 409 `environment_is_default` for the default one: make
   * another the default first.
   */
  async delete(projectId: string, environmentId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: this.path(projectId, environmentId) });
  }
}

/**
 * Webhooks of a project (admin key): where its events are POSTed, signed the Standard Webhooks way, and
 * how each delivery went.
 */
export class WebhooksApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private path(projectId: string, webhookId: string): string {
    return `/projects/${param("projectId", projectId)}/webhooks/${param("webhookId", webhookId)}`;
  }

  /**
   * Creates a webhook (`POST /projects/{projectId}/webhooks`); the answer holds the signing `secret`,
   * shown only this once. An unsafe or malformed `url` is a 400 on `/url`.
   */
  async create(projectId: string, input: CreateWebhookInput): Promise<CreatedWebhook> {
    const path = `/projects/${param("projectId", projectId)}/webhooks`;
    return (await this.http.request<CreatedWebhook>({ method: "POST", path, body: input })).body;
  }

  /** Lists the project's webhooks, oldest first, without secrets (`GET /projects/{projectId}/webhooks`). */
  list(projectId: string, options: ListOptions = {}): PageList<Webhook> {
    return new PageList(async (page) => {
      const path = `/projects/${param("projectId", projectId)}/webhooks`;
      return (await this.http.request<Page<Webhook>>({ method: "GET", path, query: pageQuery(page) })).body;
    }, options.limit);
  }

  /** Retrieves a webhook (`GET …/webhooks/{webhookId}`); 404 webhook_not_found. */
  async get(projectId: string, webhookId: string): Promise<Webhook> {
    return (await this.http.request<Webhook>({ method: "GET", path: this.path(projectId, webhookId) })).body;
  }

  /** Changes url, events, description or enabled (`PATCH …/webhooks/{webhookId}`); `enabled: true` resumes it. */
  async update(projectId: string, webhookId: string, input: UpdateWebhookInput): Promise<Webhook> {
    const path = this.path(projectId, webhookId);
    return (await this.http.request<Webhook>({ method: "PATCH", path, body: input })).body;
  }

  /** Deletes a webhook and its deliveries, pending ones included (`DELETE …/webhooks/{webhookId}`). */
  async delete(projectId: string, webhookId: string): Promise<void> {
    await this.http.request<void>({ method: "DELETE", path: this.path(projectId, webhookId) });
  }

  /**
   * Lists a webhook's deliveries, newest first, optionally of one status
   * (`GET …/webhooks/{webhookId}/deliveries`).
   */
  deliveries(projectId: string, webhookId: string, options: DeliveryListOptions = {}): PageList<WebhookDelivery> {
    return new PageList(async (page) => {
      const path = `${this.path(projectId, webhookId)}/deliveries`;
      const query = { status: options.status, ...pageQuery(page) };
      return (await this.http.request<Page<WebhookDelivery>>({ method: "GET", path, query })).body;
    }, options.limit);
  }

  /** One delivery with the JSON body it POSTs (`GET …/deliveries/{deliveryId}`); 404 delivery_not_found. */
  async delivery(projectId: string, webhookId: string, deliveryId: string): Promise<WebhookDeliveryWithPayload> {
    const path = `${this.path(projectId, webhookId)}/deliveries/${param("deliveryId", deliveryId)}`;
    return (await this.http.request<WebhookDeliveryWithPayload>({ method: "GET", path })).body;
  }

  /**
   * Queues a `ping` to the webhook, disabled or not, and answers the queued delivery
   * (`POST …/webhooks/{webhookId}/test`). It is tried once; its outcome shows in `deliveries`.
   */
  async test(projectId: string, webhookId: string): Promise<WebhookDelivery> {
    const path = `${this.path(projectId, webhookId)}/test`;
    return (await this.http.request<WebhookDelivery>({ method: "POST", path })).body;
  }
}

/** A client of the Flagstaff HTTP API, for Node.js 22.12+ and browsers (fetch only). */
export class FlagstaffClient {
  /** Projects: create, get, list, delete. */
  readonly projects: ProjectsApi;
  /** API keys: create, list, rename, revoke. */
  readonly keys: KeysApi;
  /** Environments: list, get, create, update, delete. */
  readonly environments: EnvironmentsApi;
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
    this.flags = new FlagsApi(this.http, this.checkCache, environment);
    this.segments = new SegmentsApi(this.http, environment);
    this.actors = new ActorsApi(this.http);
    this.events = new EventsApi(this.http);
    this.webhooks = new WebhooksApi(this.http);
    this.users = new UsersApi(this.http);
    this.access = new AccessApi(this.http);
    this.personalKeys = new PersonalKeysApi(this.http);
    this.auth = new AuthApi(this.http);
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
