import type { ServerResponse } from "node:http";
import { isProjectChange, type ProjectChange, type ProjectState } from "@flagstaff/core";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import { changedFlags } from "./changed-flags.js";
import type { ChangeSet } from "../../write-path/changes.js";
import { readChangeSetsWithin } from "../evaluation/feed.repository.js";
import type { Snapshot } from "../evaluation/snapshot.js";
import type { Principal } from "../../access/principal.js";
import { isActive, roleOn } from "../../access/roles.js";
import type { EndedSessions } from "../../access/principal.js";
import { FanOut } from "./fan-out.js";
import { gzipMember } from "./gzip-members.js";
import { SharedSnapshots } from "./shared-snapshot.js";

/**
 * Ends a stream and closes its connection. A stream's connection carries nothing else, and a client that
 * stopped reading without closing (fetch's abort can leave the socket open) would otherwise keep it open,
 * and with it the server's shutdown, which waits for connections with a response in progress.
 */
function finish(response: ServerResponse): void {
  response.end();
  response.socket?.destroySoon();
  // A peer that reads nothing never lets destroySoon finish: give it a moment, then cut it.
  const socket = response.socket;
  if (socket) setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * A stream whose unsent events pass this is closed when the next one comes: its client reconnects and
 * resumes. A snapshot does not count: it is produced only as fast as the client takes it.
 */
const MAX_UNSENT_CHARS = 1024 * 1024;

/** A whole event (its characters or bytes count towards MAX_UNSENT_CHARS), not a snapshot's cursor. */
const isWhole = (output: string | Buffer | Iterator<Buffer>): output is string | Buffer =>
  typeof output === "string" || Buffer.isBuffer(output);

/** How long one turn of the event loop may spend writing to every stream before checks get a turn, in ms. */
const FAN_OUT_BUDGET_MS = 4;

/** The comment that shows an idle stream alive, the same bytes for every stream. */
const HEARTBEAT = Buffer.from(": keep-alive\n\n");

/**
 * How long one turn of the event loop may spend writing snapshots, all streams together, in ms. 200 SDKs
 * reconnecting to a project of 10,000 flags are sent half a gigabyte: written a slice per turn, with
 * the checks answered between the slices.
 */
const SNAPSHOT_BUDGET_MS = 2;

/** What one instance allows its streams; see config.ts for each setting. */
export interface StreamLimits {
  readonly heartbeatMs: number;
  /** Project streams one key may hold open on this instance. */
  readonly maxPerKey: number;
  /** OFREP event streams one key may hold open on this instance (a check key is shared by every page). */
  readonly ofrepMaxPerKey: number;
  /** Streams of both kinds this instance holds open. */
  readonly maxPerInstance: number;
  /** A stream whose output has not drained for this long is closed. */
  readonly stallTimeoutMs: number;
  /** A resume further behind than this many versions is sent a snapshot instead of the log. */
  readonly replayMaxVersions: number;
  /** A resume whose change sets hold more JSON than this is sent a snapshot instead. */
  readonly replayMaxChars: number;
}

/**
 * How the streams opened with a session cookie learn that their session ended where no one told them (on
 * another instance, by pruning, or by time: idle or past its absolute end).
 */
export interface SessionCheck {
  /** Which of these sessions (hashes of their ids) still live; one query, which does not count as a use. */
  live(sessions: readonly string[]): Promise<Set<string>>;
  /** How often they are checked, in milliseconds: the longest such a stream outlives its session. */
  readonly intervalMs: number;
}

/** Sessions asked about in one query (the console's streams are few; this bounds a query's parameters). */
const SESSIONS_PER_QUERY = 1000;

/** Why a new stream is refused: its key or this instance holds as many as allowed. */
export type StreamRefusal = { readonly scope: "key" | "instance"; readonly limit: number };

export interface StreamLogger {
  warn(obj: object, msg: string): void;
}

/** What the streams count (metrics/metrics.ts's Metrics, a layer above). */
export interface StreamMetrics {
  /** A stream was sent a snapshot; `encoded`: this one made the snapshot's bytes (the first at its version). */
  snapshotSent(encoded: boolean): void;
}

/**
 * What a stream sends. `state`: the project's evaluation state, then its changes (the project stream).
 * `refetch`: only OFREP `refetchEvaluation` notifications, one whenever an answer may have changed (the
 * OFREP event stream); the client then asks the bulk evaluation again.
 */
export type StreamKind = "state" | "refetch";

interface Client {
  readonly kind: StreamKind;
  readonly projectId: string;
  /** The environment it follows: its key's, or null for the project's default (wherever that moves). */
  readonly environment: string | null;
  readonly keyId: string;
  /** Who opened it: the stream ends when they may no longer read the project. */
  readonly holder: Principal;
  readonly response: ServerResponse;
  /** The project version this client's state is at. */
  version: number;
  /** While the log is replayed: live change sets wait here, in order. */
  pending: ChangeSet[] | undefined;
  /** Output not yet handed to the socket, in order: whole events, and snapshots still to be written. */
  readonly queue: (string | Buffer | Iterator<Buffer>)[];
  /** Characters of the whole events in `queue`. */
  queued: number;
  /** Waiting for `drain`, and the timer that closes the stream if it does not come. */
  stall: NodeJS.Timeout | undefined;
  /** Its snapshot's writing waits for the next turn's budget (checks come first). */
  yielded: boolean;
  /** It asked for its events as gzip members (gzip-members.ts). */
  readonly gzip: boolean;
  closed: boolean;
}

/**
 * A project change as the stream sends it: the core form, without the project and environment the stream
 * implies.
 */
function withoutProject(change: ProjectChange & { projectId?: string; environment?: string }): ProjectChange {
  const { projectId: _projectId, environment: _environment, ...rest } = change;
  return rest as ProjectChange;
}

/**
 * Whether a change set deletes or creates the project, or creates, deletes or moves the default of one of
 * its environments. A replay that crosses one starts from a state that may not be the current one (an id of a deleted project of the same id, or 0, from before it existed):
 * the client gets a snapshot instead, never the changes of one project applied to another's state.
 * (Deleting a project also deletes its change log, so a replay from before its delete finds a gap or the
 * delete itself.)
 */
const startsOver = (set: ChangeSet): boolean =>
  set.changes.some((change) => change.kind.startsWith("project.") || change.kind.startsWith("environment."));

/** A change set's `change` event by the environment it is sent to; null: nothing in it is that environment's. */
type ChangeEvents = Map<string | undefined, Buffer | null>;

/** A change set's `change` event for the streams of one environment, or null when none of it is theirs. */
function changeEvent(set: ChangeSet, environment: string | undefined): Buffer | null {
  const changes: ProjectChange[] = [];
  for (const change of set.changes) {
    if (!isProjectChange(change)) continue;
    // Another environment's configuration is not this client's; a change of no environment is every one's.
    const of = (change as { environment?: string }).environment;
    if (of === undefined || of === environment) changes.push(withoutProject(change));
  }
  if (changes.length === 0) return null;
  const data = JSON.stringify({ version: set.version, changes });
  return Buffer.from(`id: ${set.version}\nevent: change\ndata: ${data}\n\n`, "utf8");
}

/**
 * Every server-sent event stream of a project, and their lifecycle: heartbeats, slow clients, and the end
 * of a stream when its key is revoked, its session ended, its person disabled or no longer granted the
 * project, its project deleted, or the server shuts down.
 *
 * Project streams (`GET /projects/{projectId}/stream`) start with the project's whole evaluation state
 * (`snapshot`), or resume from `Last-Event-ID` out of the change log, then send one `change` event per
 * change set the snapshot applies to that project, its id the project version: the same sets, in the
 * same order, whether written here or on another instance.
 *
 * OFREP event streams (`GET /ofrep/v1/event-stream`) send a `refetchEvaluation` message, its id the project
 * version, whenever a change set moves the project's evaluation version (what the bulk answer's ETag
 * follows): on connecting, unless `Last-Event-ID` shows the client has seen the latest such change; after
 * each such change; and when the project is read afresh.
 */
export class ProjectStreams {
  private readonly clients = new Set<Client>();
  /** Open streams per key id, for each kind. */
  private readonly perKey: Record<StreamKind, Map<string, number>> = { state: new Map(), refetch: new Map() };
  /** Each environment's snapshot event at its version, encoded once for every stream that opens then. */
  private readonly snapshots = new SharedSnapshots();
  /** Streams whose snapshot waits for the next turn's budget, in the order they came. */
  private readonly waiting = new Set<Client>();
  /** When this turn's snapshot writing must stop (performance.now()); undefined before the turn's first. */
  private turnEnds: number | undefined;
  /** Deliveries and heartbeats to every stream, a few milliseconds per turn. */
  private readonly fanOut = new FanOut<Client>(FAN_OUT_BUDGET_MS);
  private readonly heartbeat: NodeJS.Timeout;
  private readonly sessionTimer: NodeJS.Timeout | undefined;
  /** A check of the sessions is under way: the next tick does not start another. */
  private checkingSessions = false;
  /** closeAll ran: a check still under way ends nothing and logs nothing (the database may be closing). */
  private closed = false;
  private readonly unlisten: () => void;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly snapshot: Snapshot,
    private readonly logger: StreamLogger,
    private readonly limits: StreamLimits,
    private readonly sessions?: SessionCheck,
    private readonly metrics?: StreamMetrics,
  ) {
    this.unlisten = snapshot.listen({
      applied: (set) => this.applied(set),
      reloaded: (stream) => this.reloaded(stream),
    });
    this.heartbeat = setInterval(() => {
      // A stream with output waiting shows it is alive by that output; a comment must not split an event.
      this.fanOut.add([...this.clients], (client) => {
        if (client.queue.length === 0) this.enqueue(client, HEARTBEAT);
      });
    }, limits.heartbeatMs);
    this.heartbeat.unref();
    if (sessions) {
      this.sessionTimer = setInterval(() => void this.checkSessions(), sessions.intervalMs);
      this.sessionTimer.unref();
    }
  }

  /**
   * Whether a new stream of this kind and key would pass the limits; the route asks before it answers, and
   * opens the stream in the same tick, so no other stream comes between.
   */
  refusal(kind: StreamKind, keyId: string): StreamRefusal | undefined {
    if (this.clients.size >= this.limits.maxPerInstance)
      return { scope: "instance", limit: this.limits.maxPerInstance };
    const limit = kind === "state" ? this.limits.maxPerKey : this.limits.ofrepMaxPerKey;
    if ((this.perKey[kind].get(keyId) ?? 0) >= limit) return { scope: "key", limit };
    return undefined;
  }

  get size(): number {
    return this.clients.size;
  }

  /**
   * Starts a stream on a response whose headers are written. Without a usable `lastEventId` it starts with
   * a snapshot; with one the log still holds, it replays what came after it first.
   */
  async open(
    response: ServerResponse,
    projectId: string,
    environment: string | null,
    holder: Principal,
    lastEventId: number | undefined,
    gzip = false,
  ) {
    const client = this.add("state", response, projectId, environment, holder, gzip);
    const current = this.snapshot.versions.get(projectId) ?? 0;
    // Further behind than a replay may go (`Last-Event-ID: 0` on a long log): a snapshot, without reading the log.
    if (lastEventId === undefined || lastEventId > current || current - lastEventId > this.limits.replayMaxVersions) {
      this.sendSnapshot(client);
      return;
    }
    // Replay from the log; live sets wait until it is done. Taken in this tick, so none is missed.
    client.version = lastEventId;
    client.pending = [];
    try {
      const { replayMaxVersions, replayMaxChars } = this.limits;
      const sets = await readChangeSetsWithin(this.db, projectId, lastEventId, replayMaxVersions, replayMaxChars);
      const pruned =
        sets === undefined || (sets.length > 0 ? sets[0]!.version !== lastEventId + 1 : current > lastEventId);
      if (pruned || sets.some(startsOver)) this.sendSnapshot(client);
      else for (const set of sets) this.send(client, set);
    } catch (error) {
      this.logger.warn({ err: error }, "could not replay the change log for a stream; sending a snapshot");
      this.sendSnapshot(client);
    }
    const pending = client.pending;
    client.pending = undefined;
    for (const set of pending) this.send(client, set);
  }

  /**
   * Starts an OFREP event stream on a response whose headers are written. A client without `Last-Event-ID`
   * is told to refetch at once: whatever changed between its bulk evaluation and this connection is then
   * not missed (it costs one conditional request, answered 304 when nothing changed). A client that
   * resumes is told only if an evaluation change came after its id (or the id is ahead of this instance).
   */
  openRefetch(
    response: ServerResponse,
    projectId: string,
    environment: string | null,
    holder: Principal,
    lastEventId: number | undefined,
  ): void {
    const client = this.add("refetch", response, projectId, environment, holder);
    const state = this.stateFor(client);
    if (!state) {
      this.end(client);
      return;
    }
    const current = this.snapshot.versions.get(projectId) ?? 0;
    client.version = lastEventId ?? 0;
    if (lastEventId === undefined || lastEventId > current || state.evaluationVersion > lastEventId) {
      this.sendRefetch(client, current);
    }
  }

  /** Ends every stream (shutdown), so the server's close does not wait for them. */
  closeAll(): void {
    clearInterval(this.heartbeat);
    clearInterval(this.sessionTimer);
    this.closed = true;
    this.fanOut.clear();
    this.unlisten();
    for (const client of [...this.clients]) this.end(client);
  }

  /**
   * Ends the streams opened with sessions that ended here (Sessions.ended): one session's, or every
   * session's of a person. Streams of the person's keys go on: a key is not a session.
   */
  endSessions(ended: EndedSessions): void {
    for (const client of [...this.clients]) {
      const { session, userId } = client.holder;
      if (session === undefined) continue;
      if ("session" in ended ? session === ended.session : userId === ended.userId) this.end(client);
    }
  }

  /**
   * Ends the streams whose session no longer lives (Sessions.live): ended on another instance, pruned,
   * idle for too long or past its absolute end. Runs every `SessionCheck.intervalMs`; a check that fails
   * (the database is unreachable) ends nothing and is logged, and the next one tries again.
   */
  async checkSessions(): Promise<void> {
    if (!this.sessions || this.checkingSessions || this.closed) return;
    const held = new Set<string>();
    for (const client of this.clients) if (client.holder.session !== undefined) held.add(client.holder.session);
    if (held.size === 0) return;
    this.checkingSessions = true;
    try {
      const asked = [...held];
      const live = new Set<string>();
      for (let i = 0; i < asked.length; i += SESSIONS_PER_QUERY) {
        for (const session of await this.sessions.live(asked.slice(i, i + SESSIONS_PER_QUERY))) live.add(session);
      }
      // Only the sessions asked about: a stream opened meanwhile was authenticated just now.
      for (const client of [...this.clients]) {
        const session = client.holder.session;
        if (session !== undefined && held.has(session) && !live.has(session)) this.end(client);
      }
    } catch (error) {
      if (this.closed) return;
      this.logger.warn({ err: error }, "could not check the sessions of streams; they go on until the next check");
    } finally {
      this.checkingSessions = false;
    }
  }

  private add(
    kind: StreamKind,
    response: ServerResponse,
    projectId: string,
    environment: string | null,
    holder: Principal,
    gzip = false,
  ): Client {
    const keyId = holder.keyId;
    const client: Client = {
      kind,
      projectId,
      environment,
      keyId,
      holder,
      response,
      version: 0,
      pending: undefined,
      queue: [],
      queued: 0,
      stall: undefined,
      yielded: false,
      gzip,
      closed: false,
    };
    this.clients.add(client);
    const counts = this.perKey[kind];
    counts.set(keyId, (counts.get(keyId) ?? 0) + 1);
    response.on("close", () => this.remove(client));
    return client;
  }

  /** Forgets a stream, once, whichever way it ended. */
  private remove(client: Client): void {
    if (client.closed) return;
    client.closed = true;
    if (client.stall) clearTimeout(client.stall);
    client.stall = undefined;
    client.queue.length = 0;
    this.clients.delete(client);
    const counts = this.perKey[client.kind];
    const left = (counts.get(client.keyId) ?? 1) - 1;
    if (left > 0) counts.set(client.keyId, left);
    else counts.delete(client.keyId);
  }

  /** The OFREP message: `event: message` always, the type inside the data (ADR-0008). */
  private sendRefetch(client: Client, version: number, flags?: readonly string[]): void {
    client.version = version;
    // The version doubles as `etag`, which the provider sends back as `flagConfigEtag` on the refetch.
    // `flags` (ours, which providers ignore): the flags whose answers may have changed, when known.
    const data = JSON.stringify({ type: "refetchEvaluation", etag: String(version), flags });
    this.enqueue(client, `id: ${version}\nevent: message\ndata: ${data}\n\n`);
  }

  /**
   * Queues the project's whole state as it is now: the environment's snapshot event at this version,
   * encoded once for every stream that opens at it (SharedSnapshot) and written as the client takes it: a
   * client that reads nothing holds a cursor, not a copy.
   */
  private sendSnapshot(client: Client): void {
    const project = this.stateFor(client);
    if (!project) {
      this.end(client);
      return;
    }
    client.version = this.snapshot.versions.get(client.projectId) ?? 0;
    const { snapshot, made } = this.snapshots.of(project, client.version);
    this.metrics?.snapshotSent(made);
    this.enqueue(client, snapshot.reader(client.gzip));
  }

  /** The evaluation state a client follows: its environment's, or the default's; undefined once gone. */
  private stateFor(client: Client): ProjectState | undefined {
    return this.snapshot.projects.get(client.projectId)?.state(client.environment);
  }

  /** The environment a client follows now. */
  private environmentOf(client: Client): string | undefined {
    return this.snapshot.projects.get(client.projectId)?.resolve(client.environment);
  }

  /**
   * Sends a change set a client has not seen, as its environment sees it. `events` holds the set's event
   * per environment, encoded once for every stream that follows that environment (the live path shares
   * it; a replay encodes its own).
   */
  private send(client: Client, set: ChangeSet, events: ChangeEvents = new Map()): void {
    if (set.version <= client.version) return;
    client.version = set.version;
    const environment = this.environmentOf(client);
    let event = events.get(environment);
    if (event === undefined) {
      event = changeEvent(set, environment);
      events.set(environment, event);
    }
    // A set evaluation does not see (a key, a description) moves the version and sends nothing.
    if (event !== null) this.enqueue(client, event);
  }

  private applied(set: ChangeSet): void {
    const events: ChangeEvents = new Map();
    /** The flags a refetch message names, by environment (changedFlags), told once per environment. */
    const refetchFlags = new Map<string, string[] | undefined>();
    const revoked = new Set<string>();
    let deletedProject: string | undefined;
    let defaultMoved = false;
    let peopleChanged = false;
    for (const change of set.changes) {
      if (change.kind === "key.deleted") revoked.add(change.id);
      if (change.kind.startsWith("user.") || change.kind.startsWith("grant.")) peopleChanged = true;
      if (change.kind === "project.deleted") deletedProject = change.projectId;
      if (change.kind === "environment.default") defaultMoved = true;
    }
    // The project's encoded snapshots are of the version before: the next stream to open encodes anew.
    const project = this.snapshot.projects.get(set.stream);
    if (project) for (const state of project.environments.values()) this.snapshots.forget(state);
    // Each stream in turn, a few milliseconds per turn (FanOut): the checks on this event loop come between.
    this.fanOut.add([...this.clients], (client) => {
      if (client.closed) return;
      if (
        revoked.has(client.keyId) ||
        client.projectId === deletedProject ||
        (peopleChanged && !this.mayGoOn(client))
      ) {
        this.end(client);
        return;
      }
      if (client.projectId !== set.stream) return;
      const state = this.stateFor(client);
      // Its environment was deleted (its key with it, but a key bound to none follows the default).
      if (!state) {
        this.end(client);
        return;
      }
      const followsDefault = client.environment === null && defaultMoved;
      if (client.kind === "refetch") {
        // The snapshot moved the environment's evaluation version to this set's iff an answer may have changed.
        if (followsDefault) this.sendRefetch(client, set.version);
        else if (state.evaluationVersion === set.version) {
          const environment = this.environmentOf(client) as string;
          if (!refetchFlags.has(environment)) refetchFlags.set(environment, changedFlags(set, state, environment));
          this.sendRefetch(client, set.version, refetchFlags.get(environment));
        }
        return;
      }
      if (client.pending) client.pending.push(set);
      else if (followsDefault) this.sendSnapshot(client);
      else this.send(client, set, events);
    });
  }

  /**
   * Whether a stream's holder may still read its project: a key not revoked; a person (by key or session)
   * not disabled, and still granted the project.
   */
  private mayGoOn(client: Client): boolean {
    const holder = client.holder;
    if (holder.via !== "session" && !this.snapshot.keyById(holder.keyId)) return false;
    if (holder.userId === undefined) return true;
    const people = this.snapshot.people;
    return isActive(holder, people) && roleOn(holder, client.projectId, people) !== undefined;
  }

  /** The snapshot read a project afresh (it missed changes the log no longer has): start its streams over. */
  private reloaded(stream: string): void {
    for (const client of this.clients) {
      // The changes that revoked its key (or deleted its project, and its keys with it) were not seen one
      // by one: a key the fresh read no longer holds (a project's key, or an admin key when the admin
      // stream was read) ends its stream, and never sees the state read now (a project created again
      // under this id is another project).
      if (!this.mayGoOn(client)) {
        this.end(client);
        continue;
      }
      if (client.projectId !== stream || client.pending) continue;
      if (client.kind === "refetch") {
        if (this.stateFor(client)) this.sendRefetch(client, this.snapshot.versions.get(stream) ?? 0);
        else this.end(client);
      } else this.sendSnapshot(client);
    }
  }

  /** Queues output and writes what the socket takes; a client far behind is closed instead. */
  private enqueue(client: Client, output: string | Buffer | Iterator<Buffer>): void {
    if (client.closed) return;
    if (client.queued + client.response.writableLength > MAX_UNSENT_CHARS) {
      this.logger.warn(
        { projectId: client.projectId, keyId: client.keyId },
        "closing a stream whose client reads too slowly",
      );
      this.end(client);
      return;
    }
    // A compressed stream's events are gzip members, each shared one compressed once (gzip-members.ts).
    const out = client.gzip && isWhole(output) ? gzipMember(output) : output;
    client.queue.push(out);
    if (isWhole(out)) client.queued += out.length;
    this.pump(client);
  }

  /**
   * Writes queued output until the socket's buffer is full, then waits for `drain`. A client that takes
   * nothing for `stallTimeoutMs` is closed: it reconnects and resumes when it reads again.
   */
  private pump(client: Client): void {
    while (!client.stall && !client.yielded && !client.closed && client.queue.length > 0) {
      const head = client.queue[0]!;
      let text: string | Buffer;
      if (isWhole(head)) {
        client.queue.shift();
        client.queued -= head.length;
        text = head;
      } else {
        // A snapshot's chunks go out within the turn's budget, shared by every stream: a socket that takes
        // everything (loopback, a fast reader) would otherwise have its whole snapshot written in one turn.
        if (!this.mayWriteSnapshot()) {
          client.yielded = true;
          this.waiting.add(client);
          continue;
        }
        const next = head.next();
        if (next.done) {
          client.queue.shift();
          continue;
        }
        text = next.value;
      }
      if (!client.response.write(text)) {
        client.stall = setTimeout(() => {
          this.logger.warn(
            { projectId: client.projectId, keyId: client.keyId },
            "closing a stream that stopped reading",
          );
          this.end(client);
        }, this.limits.stallTimeoutMs);
        client.stall.unref();
        client.response.once("drain", () => {
          if (client.stall) clearTimeout(client.stall);
          client.stall = undefined;
          this.pump(client);
        });
      }
    }
  }

  /**
   * Whether this turn's snapshot budget has time left. The first write of a turn starts its budget and
   * schedules the next turn, which resumes the waiting streams in the order they came.
   */
  private mayWriteSnapshot(): boolean {
    const now = performance.now();
    if (this.turnEnds === undefined) {
      this.turnEnds = now + SNAPSHOT_BUDGET_MS;
      setImmediate(() => {
        this.turnEnds = undefined;
        const waiting = [...this.waiting];
        this.waiting.clear();
        for (let i = 0; i < waiting.length; i++) {
          const client = waiting[i]!;
          client.yielded = false;
          this.pump(client);
          if (client.yielded) {
            // The budget ran out on this one: those not reached go first next turn, then those served.
            const served = [...this.waiting];
            this.waiting.clear();
            for (const rest of waiting.slice(i + 1)) this.waiting.add(rest);
            for (const again of served) this.waiting.add(again);
            return;
          }
        }
      });
    }
    return now < this.turnEnds;
  }

  private end(client: Client): void {
    this.remove(client);
    finish(client.response);
  }
}
