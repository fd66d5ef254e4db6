// The API extensions the console uses before @flagstaff/sdk has methods for them: the actor lists of a flag
// and of a segment, explain, ETags with If-Match, and webhooks. Everything here goes over the same base URL,
// key and fetch as the SDK client, and fails with the SDK's FlagstaffError, so moving to the SDK later is a
// change of this one file. An endpoint this server does not have answers NotAvailableError.
import {
  type FetchLike,
  type Flag,
  FlagstaffError,
  isProblemDetails,
  type Page,
  type Segment,
  type UpdateFlagInput,
  type UpdateSegmentInput,
} from "@flagstaff/sdk";

/** An actor attached to a flag or a member of a segment. */
export interface Membership {
  actorId: string;
  addedAt: string;
}

/** Why a flag is on or off for some actors (`GET …/flags/{flag}/explain`). */
export interface Explanation {
  enabled: boolean;
  reason: "DISABLED" | "STATIC" | "TARGETING_MATCH" | "SPLIT" | "DEFAULT";
  rule: "status" | "actor" | "segment" | "actor_rollout" | "none";
  actorId: string | null;
  segment: { id: string; name: string } | null;
  threshold: number;
  callRolloutPercentage: number;
  actors: {
    actorId: string;
    attached: boolean;
    segments: { id: string; name: string }[];
    bucket: number;
    inRollout: boolean;
  }[];
}

/** A flag or segment with the ETag it was read or written with (undefined when the server sends none). */
export interface Tagged<T> {
  value: T;
  etag: string | undefined;
}

export interface Webhook {
  id: string;
  projectId: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreatedWebhook extends Webhook {
  secret: string;
}

export interface Delivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface ListQuery {
  q?: string;
  limit?: number;
  before?: string;
  after?: string;
}

/** The endpoint does not exist on this server (it answered 404 without naming a missing resource). */
export class NotAvailableError extends FlagstaffError {
  constructor(what: string) {
    super({ status: 404, code: "not_available", detail: `${what} is not available on this server.` });
  }
}

export function isNotAvailable(error: unknown): error is NotAvailableError {
  return error instanceof NotAvailableError;
}

/** 404 codes that name a missing resource; any other 404 means the route itself is unknown. */
const RESOURCE_404 = new Set([
  "project_not_found",
  "flag_not_found",
  "segment_not_found",
  "actor_not_found",
  "webhook_not_found",
  "key_not_found",
]);

const enc = encodeURIComponent;

export class Extensions {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly fetchImpl: FetchLike,
  ) {}

  private async send<T>(
    method: string,
    path: string,
    options: {
      query?: Record<string, string | number | string[] | undefined>;
      body?: unknown;
      ifMatch?: string;
      what?: string;
    } = {},
  ): Promise<{ body: T; headers: Headers }> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value === undefined || value === "") continue;
      for (const v of Array.isArray(value) ? value : [String(value)]) params.append(name, v);
    }
    const qs = params.toString();
    const url = `${this.baseUrl}${path}${qs ? `?${qs}` : ""}`;
    const headers: Record<string, string> = {
      accept: "application/json, application/problem+json",
      authorization: `Bearer ${this.apiKey}`,
    };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (options.ifMatch !== undefined) headers["if-match"] = options.ifMatch;
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
    } catch (error) {
      throw new FlagstaffError({ status: 0, code: "network_error", detail: `${method} ${url} failed.`, cause: error });
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) return { body: parsed as T, headers: response.headers };
    if (isProblemDetails(parsed)) {
      if (response.status === 404 && !RESOURCE_404.has(parsed.code) && options.what) {
        throw new NotAvailableError(options.what);
      }
      throw new FlagstaffError({ status: response.status, code: parsed.code, detail: parsed.detail, problem: parsed });
    }
    if (response.status === 404 && options.what) throw new NotAvailableError(options.what);
    throw new FlagstaffError({
      status: response.status,
      code: "http_error",
      detail: `${method} ${url} answered ${response.status}.`,
    });
  }

  private flagPath(project: string, flag: string): string {
    return `/projects/${enc(project)}/flags/${enc(flag)}`;
  }

  private segmentPath(project: string, segment: string): string {
    return `/projects/${enc(project)}/segments/${enc(segment)}`;
  }

  /** `GET …/flags/{flag}/actors`: the actors attached to a flag, by actor id. */
  async flagActors(project: string, flag: string, query: ListQuery): Promise<Page<Membership>> {
    const path = `${this.flagPath(project, flag)}/actors`;
    return (
      await this.send<Page<Membership>>("GET", path, { query: { ...query }, what: "The list of a flag's actors" })
    ).body;
  }

  /** `GET …/segments/{id}/actors`: the members of a segment, by actor id. */
  async segmentActors(project: string, segment: string, query: ListQuery): Promise<Page<Membership>> {
    const path = `${this.segmentPath(project, segment)}/actors`;
    return (
      await this.send<Page<Membership>>("GET", path, { query: { ...query }, what: "The list of a segment's members" })
    ).body;
  }

  /** `GET …/flags/{flag}/explain?actorIds=…`. */
  async explain(project: string, flag: string, actorIds: string[]): Promise<Explanation> {
    const path = `${this.flagPath(project, flag)}/explain`;
    return (await this.send<Explanation>("GET", path, { query: { actorIds }, what: "Explain" })).body;
  }

  async getFlag(project: string, flag: string): Promise<Tagged<Flag>> {
    const { body, headers } = await this.send<Flag>("GET", this.flagPath(project, flag));
    return { value: body, etag: headers.get("etag") ?? undefined };
  }

  /** PATCH a flag, with If-Match when an ETag is known (412 precondition_failed when it changed meanwhile). */
  async updateFlag(project: string, flag: string, input: UpdateFlagInput, ifMatch?: string): Promise<Tagged<Flag>> {
    const { body, headers } = await this.send<Flag>("PATCH", this.flagPath(project, flag), { body: input, ifMatch });
    return { value: body, etag: headers.get("etag") ?? undefined };
  }

  async deleteFlag(project: string, flag: string, ifMatch?: string): Promise<void> {
    await this.send<void>("DELETE", this.flagPath(project, flag), { ifMatch });
  }

  async getSegment(project: string, segment: string): Promise<Tagged<Segment>> {
    const { body, headers } = await this.send<Segment>("GET", this.segmentPath(project, segment));
    return { value: body, etag: headers.get("etag") ?? undefined };
  }

  async updateSegment(
    project: string,
    segment: string,
    input: UpdateSegmentInput,
    ifMatch?: string,
  ): Promise<Tagged<Segment>> {
    const { body, headers } = await this.send<Segment>("PATCH", this.segmentPath(project, segment), {
      body: input,
      ifMatch,
    });
    return { value: body, etag: headers.get("etag") ?? undefined };
  }

  async deleteSegment(project: string, segment: string, ifMatch?: string): Promise<void> {
    await this.send<void>("DELETE", this.segmentPath(project, segment), { ifMatch });
  }

  async webhooks(project: string, query: ListQuery): Promise<Page<Webhook>> {
    const path = `/projects/${enc(project)}/webhooks`;
    const { limit, before, after } = query;
    return (await this.send<Page<Webhook>>("GET", path, { query: { limit, before, after }, what: "Webhooks" })).body;
  }

  async createWebhook(
    project: string,
    input: { url: string; events?: string[]; description?: string },
  ): Promise<CreatedWebhook> {
    return (
      await this.send<CreatedWebhook>("POST", `/projects/${enc(project)}/webhooks`, { body: input, what: "Webhooks" })
    ).body;
  }

  async updateWebhook(
    project: string,
    id: string,
    input: { enabled?: boolean; url?: string; events?: string[]; description?: string },
  ): Promise<Webhook> {
    return (await this.send<Webhook>("PATCH", `/projects/${enc(project)}/webhooks/${enc(id)}`, { body: input })).body;
  }

  async deleteWebhook(project: string, id: string): Promise<void> {
    await this.send<void>("DELETE", `/projects/${enc(project)}/webhooks/${enc(id)}`);
  }

  async deliveries(project: string, id: string, query: ListQuery): Promise<Page<Delivery>> {
    const path = `/projects/${enc(project)}/webhooks/${enc(id)}/deliveries`;
    const { limit, before, after } = query;
    return (await this.send<Page<Delivery>>("GET", path, { query: { limit, before, after } })).body;
  }

  async testWebhook(project: string, id: string): Promise<void> {
    await this.send<unknown>("POST", `/projects/${enc(project)}/webhooks/${enc(id)}/test`, { body: {} });
  }
}
