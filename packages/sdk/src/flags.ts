import { attributeEntries, attributeQuery } from "./attributes.js";
import { CheckCache } from "./check-cache.js";
import { FlagstaffError } from "./errors.js";
import { ifMatchHeader, tagged } from "./etags.js";
import type { QueryValue, Transport } from "./http.js";
import { PageList } from "./pagination.js";
import { pageQuery, param } from "./params.js";
import type {
  ActorMembership,
  ActorMembershipListOptions,
  CheckOptions,
  CheckResult,
  CopyFlagInput,
  CreateFlagInput,
  ExplainOptions,
  Flag,
  FlagExplanation,
  FlagListOptions,
  ListOptions,
  Page,
  ProjectUsage,
  Tagged,
  UpdateFlagInput,
  UsageRange,
  UsageSeries,
  VariantValue,
  WriteOptions,
} from "./types.js";

/** Whether `explain`'s second argument is the seed's list of actor ids (rather than options). */
const isActorList = (value: readonly string[] | ExplainOptions): value is readonly string[] => Array.isArray(value);

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
   * Archives the flag (`POST …/flags/{flagName}/archive`): evaluated as not found everywhere, left out of
   * lists, its history, configurations and name kept. 409 flag_archived when it is already, flag_in_use
   * while another flag names it as a prerequisite.
   */
  async archive(projectId: string, flagName: string, options?: WriteOptions): Promise<Flag> {
    return this.lifecycle(projectId, flagName, "archive", options);
  }

  /** Restores an archived flag as it was, in every environment (`POST …/flags/{flagName}/restore`). */
  async restore(projectId: string, flagName: string, options?: WriteOptions): Promise<Flag> {
    return this.lifecycle(projectId, flagName, "restore", options);
  }

  private async lifecycle(projectId: string, flagName: string, action: string, options?: WriteOptions) {
    const path = `${this.path(projectId, flagName)}/${action}`;
    const headers = ifMatchHeader(options);
    return (await this.http.request<Flag>({ method: "POST", path, query: this.scope, headers })).body;
  }

  /**
   * The flag's evaluations per bucket and variant in the client's environment (`GET …/flags/{flagName}/usage`):
   * every bucket from `from` to `to` by `step` (minute, hour or day; at most 1,500), and their totals.
   */
  async usage(projectId: string, flagName: string, range: UsageRange = {}): Promise<UsageSeries> {
    const path = `${this.path(projectId, flagName)}/usage`;
    const query = { step: range.step, from: range.from, to: range.to, ...this.scope };
    return (await this.http.request<UsageSeries>({ method: "GET", path, query })).body;
  }

  /**
   * Several flags' evaluations per bucket, every variant added up (`GET /projects/{projectId}/usage`): at
   * most 100 flags; names the environment lacks are left out.
   */
  async usageOf(projectId: string, flagNames: readonly string[], range: UsageRange = {}): Promise<ProjectUsage> {
    const path = `/projects/${param("projectId", projectId)}/usage`;
    const query = { flags: flagNames, step: range.step, from: range.from, to: range.to, ...this.scope };
    return (await this.http.request<ProjectUsage>({ method: "GET", path, query })).body;
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
      const { name, q, status, sort, kind } = options;
      const flag = (value: boolean | undefined) => (value === undefined ? undefined : String(value));
      const total = options.total ? "true" : undefined;
      const query = {
        name,
        q,
        status,
        sort,
        total,
        kind,
        stale: flag(options.stale),
        archived: flag(options.archived),
        ...this.scope,
        ...pageQuery(page),
      };
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
