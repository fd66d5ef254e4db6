import { isIP } from "node:net";
import { DEFAULT_MAX_ENVIRONMENTS, FLAG_KINDS, type FlagKind, normalizeEmail } from "@flagstaff/core";
import { resolve } from "node:path";

export type Dialect = "sqlite" | "postgres";

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Where the data lives, as given in DATABASE_URL. */
  readonly databaseUrl: string;
  readonly dialect: Dialect;
  /** For SQLite: the file path (or ":memory:"); for PostgreSQL: the connection string. */
  readonly databaseLocation: string;
  readonly databasePoolSize: number;
  readonly adminApiKey: string | undefined;
  readonly logLevel: string;
  /** Requests per minute per API key (or per address without one); 0 turns rate limiting off. */
  readonly rateLimitPerMinute: number;
  /** OFREP bulk evaluations per minute a check key may make from one client address (0: no limit). */
  readonly ofrepBulkRateLimitPerMinute: number;
  /**
   * Which proxies' X-Forwarded-For to believe for the client's address (Fastify's trustProxy): false,
   * true (any), a number of hops, or addresses and CIDR ranges.
   */
  readonly trustProxy: boolean | number | string;
  /** How often coalesced `latestCheckedAt` values are written, in milliseconds. */
  readonly checkFlushIntervalMs: number;
  /** How often the snapshot compares its versions with the database, in milliseconds. */
  readonly feedPollIntervalMs: number;
  /** How often the job runner looks for due work (webhook deliveries, scheduled changes), in milliseconds. */
  readonly jobsPollIntervalMs: number;
  /** How many times a scheduled change is tried when the database fails it, before it is marked failed. */
  readonly scheduledChangeMaxAttempts: number;
  readonly metricsPublic: boolean;
  /** Longest time a request may take to arrive whole, headers and body, in milliseconds. */
  readonly requestTimeoutMs: number;
  /** Longest time a request's headers may take to arrive, in milliseconds (at most requestTimeoutMs). */
  readonly headersTimeoutMs: number;
  /** Origins whose pages may call the API (CORS); empty turns CORS off, `["*"]` allows every origin. */
  readonly corsAllowedOrigins: readonly string[];
  /** Events older than this many days are pruned from the history; 0 keeps them forever. */
  readonly historyRetentionDays: number;
  /** Lets webhooks target loopback, private and link-local addresses (refused by default). */
  readonly webhookAllowPrivateNetworks: boolean;
  /** Longest a webhook receiver may take to answer, in milliseconds. */
  readonly webhookTimeoutMs: number;
  /** Delay before a failed delivery's first retry, in milliseconds; each next one doubles (at most an hour). */
  readonly webhookRetryBaseMs: number;
  /** How long after it was queued a delivery is retried before it is marked failed, in milliseconds. */
  readonly webhookRetryWindowMs: number;
  /** Webhook deliveries one instance sends at once. */
  readonly webhookConcurrency: number;
  /** How often an idle project stream sends a comment, so proxies and clients know it is alive. */
  readonly streamHeartbeatMs: number;
  /** The largest OFREP evaluation body read, in bytes (other routes take 1 MiB). */
  readonly ofrepBodyLimitBytes: number;
  /** Project streams one key may hold open on one instance; more are refused with 429. */
  readonly streamMaxPerKey: number;
  /** ENVIRONMENTS_MAX_PER_PROJECT: the most environments one project may have. */
  readonly environmentsMaxPerProject: number;
  /** OFREP event streams one key may hold open on one instance (a browser check key serves every page). */
  readonly ofrepStreamMaxPerKey: number;
  /** Streams of both kinds one instance holds open; more are refused with 503. */
  readonly streamMaxPerInstance: number;
  /** A stream whose client takes none of its waiting output for this long is closed, in milliseconds. */
  readonly streamStallTimeoutMs: number;
  /**
   * How often the streams opened with a session cookie check that their sessions still live, in
   * milliseconds: the longest such a stream outlives a session ended on another instance or by time.
   */
  readonly streamSessionCheckMs: number;
  /** A resume further behind than this many versions gets a snapshot instead of the change log. */
  readonly streamReplayMaxVersions: number;
  /** A resume whose missed changes hold more JSON than this (characters) gets a snapshot instead. */
  readonly streamReplayMaxBytes: number;
  /** PUBLIC_URL: where people reach the server (its origin is the console's; https makes cookies Secure). */
  readonly publicUrl: string | undefined;
  /** A session unused this long ends, in milliseconds. */
  readonly sessionIdleMs: number;
  /** A session ends this long after sign-in, in milliseconds. */
  readonly sessionMaxMs: number;
  /** E-mail and password sign-in is on. */
  readonly passwordSignIn: boolean;
  /** Usage and lifecycle (docs/usage.md, docs/lifecycle.md). */
  readonly usage: UsageConfig;
  /** Single sign-on with OpenID Connect; undefined when OIDC_ISSUER is unset. */
  readonly oidc: OidcConfig | undefined;
}

export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The e-mail domains that may sign in (lower case); empty: any verified e-mail. */
  readonly allowedDomains: readonly string[];
  readonly roleClaim: string | undefined;
  readonly adminValues: readonly string[];
  /** The sign-in button's label. */
  readonly name: string;
}

export interface UsageConfig {
  /** USAGE_COUNTING: whether evaluations are counted (latestCheckedAt is kept either way). */
  readonly counting: boolean;
  /** How often counted evaluations are written, in milliseconds. */
  readonly flushIntervalMs: number;
  /** How long minute, hour and day buckets are kept, in milliseconds (days: 0 for ever). */
  readonly minuteRetentionMs: number;
  readonly hourRetentionMs: number;
  readonly dayRetentionMs: number;
  /** The window of the unused and one-variant stale rules, in milliseconds. */
  readonly staleAfterMs: number;
  /** How often the stale rules are checked, in milliseconds. */
  readonly staleCheckIntervalMs: number;
  /** Each kind's expected lifetime in milliseconds; 0: permanent. */
  readonly lifetimeMs: Readonly<Record<FlagKind, number>>;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** Named ranges proxy-addr (Fastify's trustProxy) knows. */
const NAMED_RANGES = new Set(["loopback", "linklocal", "uniquelocal"]);

/**
 * TRUST_PROXY: unset or false, true (every proxy: only when nothing reaches the server but through
 * them), a number of hops, or comma-separated addresses, CIDR ranges and proxy-addr's named ranges.
 */
function trustProxyOf(env: NodeJS.ProcessEnv): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim();
  if (raw === undefined || raw === "" || raw.toLowerCase() === "false") return false;
  if (raw.toLowerCase() === "true") return true;
  if (/^\d+$/.test(raw)) return integer(env, "TRUST_PROXY", 0, 0, 100);
  const entries = raw.split(",").map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, prefix, ...more] = entry.split("/");
    const family = isIP(address ?? "");
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (NAMED_RANGES.has(entry) || (family !== 0 && prefixOk && more.length === 0)) continue;
    throw new ConfigError(
      `TRUST_PROXY must be true, false, a number of hops or comma-separated addresses and CIDR ranges, got "${entry}"`,
    );
  }
  return entries.join(",");
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes"].includes(raw.toLowerCase())) return true;
  if (["0", "false", "no"].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** An entry's origin as a browser would send it in `Origin`, or undefined if it is not an http(s) URL. */
function originOf(entry: string): string | undefined {
  try {
    const url = new URL(entry);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Browsers send `Origin` in one exact spelling (lower-case host, no default port, no slash) and it is
 * compared as a string, so an entry spelled any other way would never match: it is refused, not fixed up.
 */
function corsOrigins(env: NodeJS.ProcessEnv): readonly string[] {
  const raw = env.CORS_ALLOWED_ORIGINS;
  if (raw === undefined || raw.trim() === "") return [];
  const entries = raw.split(",").map((entry) => entry.trim());
  if (entries.includes("*")) {
    if (entries.length > 1)
      throw new ConfigError("CORS_ALLOWED_ORIGINS: * allows every origin, so it must stand alone");
    return ["*"];
  }
  for (const entry of entries) {
    const origin = originOf(entry);
    if (origin !== entry) {
      const hint = origin === undefined ? "" : `; did you mean ${origin}?`;
      throw new ConfigError(
        `CORS_ALLOWED_ORIGINS must list origins such as https://app.example.com or http://localhost:5173 (scheme, host and port only), got "${entry}"${hint}`,
      );
    }
  }
  return [...new Set(entries)];
}

function parseDatabaseUrl(url: string): { dialect: Dialect; location: string } {
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    return { dialect: "postgres", location: url };
  }
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length);
    if (path === "") throw new ConfigError("DATABASE_URL file: needs a path, e.g. file:./data/flags.db");
    return { dialect: "sqlite", location: path === ":memory:" ? path : resolve(path) };
  }
  throw new ConfigError(`DATABASE_URL must start with file:, postgres:// or postgresql://, got "${url}"`);
}

const list = (raw: string | undefined) =>
  (raw ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");

function publicUrlOf(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.PUBLIC_URL;
  if (raw === undefined || raw === "") return undefined;
  const origin = originOf(raw.replace(/\/+$/, ""));
  if (origin === undefined || origin !== raw.replace(/\/+$/, "")) {
    throw new ConfigError(
      `PUBLIC_URL must be where people reach the server, such as https://flags.example.com (no path), got "${raw}"`,
    );
  }
  return origin;
}

function oidcOf(env: NodeJS.ProcessEnv, publicUrl: string | undefined): OidcConfig | undefined {
  const issuer = env.OIDC_ISSUER || undefined;
  if (issuer === undefined) return undefined;
  const clientId = env.OIDC_CLIENT_ID || undefined;
  const clientSecret = env.OIDC_CLIENT_SECRET || undefined;
  if (clientId === undefined || clientSecret === undefined) {
    throw new ConfigError("OIDC_ISSUER needs OIDC_CLIENT_ID and OIDC_CLIENT_SECRET too");
  }
  if (publicUrl === undefined) {
    throw new ConfigError(
      "OIDC_ISSUER needs PUBLIC_URL: the provider sends people back to PUBLIC_URL/auth/oidc/callback",
    );
  }
  const roleClaim = env.OIDC_ROLE_CLAIM || undefined;
  const adminValues = list(env.OIDC_ADMIN_VALUES);
  if ((roleClaim === undefined) !== (adminValues.length === 0)) {
    throw new ConfigError("OIDC_ROLE_CLAIM and OIDC_ADMIN_VALUES go together: set both or neither");
  }
  return Object.freeze({
    issuer,
    clientId,
    clientSecret,
    // Folded as e-mails are (A–Z only), and compared with the e-mail's domain folded the same way.
    allowedDomains: Object.freeze(list(env.OIDC_ALLOWED_DOMAINS).map(normalizeEmail)),
    roleClaim,
    adminValues: Object.freeze(adminValues),
    name: env.OIDC_NAME || "SSO",
  });
}

const DAY = 86_400_000;
/** Expected lifetimes in days by default: release and experiment flags are meant to go; the others stay. */
/** The stale rules' window by default, in days. */
export const DEFAULT_STALE_AFTER_DAYS = 30;
export const DEFAULT_LIFETIME_DAYS: Readonly<Record<FlagKind, number>> = {
  release: 40,
  experiment: 40,
  operational: 0,
  "kill-switch": 0,
  permission: 0,
};

function usageOf(env: NodeJS.ProcessEnv): UsageConfig {
  const lifetimeMs = Object.fromEntries(
    FLAG_KINDS.map((kind) => {
      const name = `FLAG_LIFETIME_${kind.toUpperCase().replace("-", "_")}_DAYS`;
      return [kind, integer(env, name, DEFAULT_LIFETIME_DAYS[kind], 0, 36_500) * DAY];
    }),
  ) as Record<FlagKind, number>;
  return Object.freeze({
    counting: boolean(env, "USAGE_COUNTING", true),
    flushIntervalMs: integer(env, "USAGE_FLUSH_INTERVAL_MS", 10_000, 100, 60_000),
    minuteRetentionMs: integer(env, "USAGE_MINUTES_RETENTION_HOURS", 48, 1, 24 * 365) * 3_600_000,
    hourRetentionMs: integer(env, "USAGE_HOURS_RETENTION_DAYS", 90, 1, 36_500) * DAY,
    dayRetentionMs: integer(env, "USAGE_DAYS_RETENTION_DAYS", 0, 0, 36_500) * DAY,
    staleAfterMs: integer(env, "STALE_AFTER_DAYS", DEFAULT_STALE_AFTER_DAYS, 1, 3650) * DAY,
    staleCheckIntervalMs: integer(env, "STALE_CHECK_INTERVAL_MS", 3_600_000, 1000, 7 * DAY),
    lifetimeMs: Object.freeze(lifetimeMs),
  });
}

/** Reads the environment once into a validated, frozen config; throws ConfigError on the first bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || "file:./data/flags.db";
  const { dialect, location } = parseDatabaseUrl(databaseUrl);
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  }
  const adminApiKey = env.ADMIN_API_KEY || undefined;
  if (adminApiKey !== undefined && adminApiKey.length < 16) {
    throw new ConfigError("ADMIN_API_KEY must be at least 16 characters long");
  }
  const requestTimeoutMs = integer(env, "REQUEST_TIMEOUT_MS", 30_000, 1000, 3_600_000);
  const headersTimeoutMs = integer(env, "HEADERS_TIMEOUT_MS", 10_000, 1000, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be longer than REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  const publicUrl = publicUrlOf(env);
  const sessionIdleMs = integer(env, "SESSION_IDLE_MINUTES", 720, 1, 525_600) * 60_000;
  const sessionMaxMs = integer(env, "SESSION_MAX_HOURS", 168, 1, 8760) * 3_600_000;
  return Object.freeze({
    publicUrl,
    sessionIdleMs,
    sessionMaxMs,
    passwordSignIn: boolean(env, "PASSWORD_SIGN_IN", true),
    oidc: oidcOf(env, publicUrl),
    usage: usageOf(env),
    host: env.HOST || "127.0.0.1",
    port: integer(env, "PORT", 8080, 0, 65535),
    databaseUrl,
    dialect,
    databaseLocation: location,
    databasePoolSize: integer(env, "DATABASE_POOL_SIZE", 10, 1, 1000),
    adminApiKey,
    logLevel,
    rateLimitPerMinute: integer(env, "RATE_LIMIT_PER_MINUTE", 0, 0, 100_000_000),
    ofrepBulkRateLimitPerMinute: integer(env, "OFREP_BULK_RATE_LIMIT_PER_MINUTE", 300, 0, 100_000_000),
    trustProxy: trustProxyOf(env),
    checkFlushIntervalMs: integer(env, "CHECK_FLUSH_INTERVAL_MS", 1000, 10, 1000),
    feedPollIntervalMs: integer(env, "FEED_POLL_INTERVAL_MS", 5000, 50, 3_600_000),
    jobsPollIntervalMs: integer(env, "JOBS_POLL_INTERVAL_MS", 1000, 20, 60_000),
    scheduledChangeMaxAttempts: integer(env, "SCHEDULED_CHANGE_MAX_ATTEMPTS", 5, 1, 100),
    metricsPublic: boolean(env, "METRICS_PUBLIC", false),
    requestTimeoutMs,
    headersTimeoutMs,
    corsAllowedOrigins: Object.freeze(corsOrigins(env)),
    historyRetentionDays: integer(env, "HISTORY_RETENTION_DAYS", 0, 0, 365_000),
    webhookAllowPrivateNetworks: boolean(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS", false),
    webhookTimeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
    webhookRetryBaseMs: integer(env, "WEBHOOK_RETRY_BASE_MS", 5000, 10, 3_600_000),
    webhookRetryWindowMs: integer(env, "WEBHOOK_RETRY_WINDOW_MS", 86_400_000, 1000, 30 * 86_400_000),
    webhookConcurrency: integer(env, "WEBHOOK_CONCURRENCY", 64, 1, 1000),
    streamHeartbeatMs: integer(env, "STREAM_HEARTBEAT_MS", 15_000, 100, 3_600_000),
    // At least the 4 KiB the OFREP fast path reads itself, so both paths refuse the same bodies.
    ofrepBodyLimitBytes: integer(env, "OFREP_BODY_LIMIT_BYTES", 32 * 1024, 4096, 1024 * 1024),
    streamMaxPerKey: integer(env, "STREAM_MAX_PER_KEY", 100, 1, 1_000_000),
    environmentsMaxPerProject: integer(env, "ENVIRONMENTS_MAX_PER_PROJECT", DEFAULT_MAX_ENVIRONMENTS, 1, 1000),
    ofrepStreamMaxPerKey: integer(env, "OFREP_STREAM_MAX_PER_KEY", 5000, 1, 1_000_000),
    streamMaxPerInstance: integer(env, "STREAM_MAX_PER_INSTANCE", 20_000, 1, 1_000_000),
    streamStallTimeoutMs: integer(env, "STREAM_STALL_TIMEOUT_MS", 30_000, 100, 3_600_000),
    streamSessionCheckMs: integer(env, "STREAM_SESSION_CHECK_MS", 5000, 100, 60_000),
    streamReplayMaxVersions: integer(env, "STREAM_REPLAY_MAX_VERSIONS", 1000, 0, 1_000_000),
    streamReplayMaxBytes: integer(env, "STREAM_REPLAY_MAX_BYTES", 1_048_576, 1024, 1_073_741_824),
  });
}
