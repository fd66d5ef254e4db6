import type { ServerResponse } from "node:http";
import { isProjectChange, type ProjectChange } from "@flagstaff/core";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import type { ChangeSet } from "../evaluation/changes.js";
import { readChangeSetsSince } from "../evaluation/feed.repository.js";
import type { Snapshot } from "../evaluation/snapshot.js";

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

/** A stream whose unsent output grows past this is closed: its client reconnects and resumes. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

export interface StreamLogger {
  warn(obj: object, msg: string): void;
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
  readonly keyId: string;
  readonly response: ServerResponse;
  /** The project version this client's state is at. */
  version: number;
  /** While the log is replayed: live change sets wait here, in order. */
  pending: ChangeSet[] | undefined;
}

/** A project change as the stream sends it: the core form, without the project id the stream implies. */
function withoutProject(change: ProjectChange & { projectId?: string }): ProjectChange {
  const { projectId: _projectId, ...rest } = change;
  return rest as ProjectChange;
}

/**
 * Whether a change set deletes or creates the project. A replay that crosses one starts from a state that
 * is not the current project's (an id of a deleted project of the same id, or 0, from before it existed):
 * the client gets a snapshot instead, never the changes of one project applied to another's state.
 * (Deleting a project also deletes its change log, so a replay from before its delete finds a gap or the
 * delete itself.)
 */
const startsOver = (set: ChangeSet): boolean =>
  set.changes.some((change) => change.kind === "project.created" || change.kind === "project.deleted");

/**
 * Every server-sent event stream of a project, and their lifecycle: heartbeats, slow clients, and the end
 * of a stream when its key is revoked, its project deleted, or the server shuts down.
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
  private readonly heartbeat: NodeJS.Timeout;
  private readonly unlisten: () => void;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly snapshot: Snapshot,
    private readonly logger: StreamLogger,
    heartbeatMs: number,
  ) {
    this.unlisten = snapshot.listen({
      applied: (set) => this.applied(set),
      reloaded: (stream) => this.reloaded(stream),
    });
    this.heartbeat = setInterval(() => {
      for (const client of this.clients) this.write(client, ": keep-alive\n\n");
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.clients.size;
  }

  /**
   * Starts a stream on a response whose headers are written. Without a usable `lastEventId` it starts with
   * a snapshot; with one the log still holds, it replays what came after it first.
   */
  async open(response: ServerResponse, projectId: string, keyId: string, lastEventId: number | undefined) {
    const client = this.add("state", response, projectId, keyId);
    const current = this.snapshot.versions.get(projectId) ?? 0;
    if (lastEventId === undefined || lastEventId > current) {
      this.sendSnapshot(client);
      return;
    }
    // Replay from the log; live sets wait until it is done. Taken in this tick, so none is missed.
    client.version = lastEventId;
    client.pending = [];
    try {
      const sets = await readChangeSetsSince(this.db, projectId, lastEventId);
      const pruned = sets.length > 0 ? sets[0]!.version !== lastEventId + 1 : current > lastEventId;
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
  openRefetch(response: ServerResponse, projectId: string, keyId: string, lastEventId: number | undefined): void {
    const client = this.add("refetch", response, projectId, keyId);
    const project = this.snapshot.projects.get(projectId);
    if (!project) {
      this.end(client);
      return;
    }
    const current = this.snapshot.versions.get(projectId) ?? 0;
    client.version = lastEventId ?? 0;
    if (lastEventId === undefined || lastEventId > current || project.evaluationVersion > lastEventId) {
      this.sendRefetch(client, current);
    }
  }

  /** Ends every stream (shutdown), so the server's close does not wait for them. */
  closeAll(): void {
    clearInterval(this.heartbeat);
    this.unlisten();
    for (const client of this.clients) finish(client.response);
    this.clients.clear();
  }

  private add(kind: StreamKind, response: ServerResponse, projectId: string, keyId: string): Client {
    const client: Client = { kind, projectId, keyId, response, version: 0, pending: undefined };
    this.clients.add(client);
    response.on("close", () => this.clients.delete(client));
    return client;
  }

  /** The OFREP message: `event: message` always, the type inside the data (ADR-0008). */
  private sendRefetch(client: Client, version: number): void {
    client.version = version;
    // The version doubles as `etag`, which the provider sends back as `flagConfigEtag` on the refetch.
    const data = JSON.stringify({ type: "refetchEvaluation", etag: String(version) });
    this.write(client, `id: ${version}\nevent: message\ndata: ${data}\n\n`);
  }

  private sendSnapshot(client: Client): void {
    const project = this.snapshot.projects.get(client.projectId);
    if (!project) {
      this.end(client);
      return;
    }
    client.version = this.snapshot.versions.get(client.projectId) ?? 0;
    const data = JSON.stringify({ version: client.version, state: project.toJSON() });
    this.write(client, `id: ${client.version}\nevent: snapshot\ndata: ${data}\n\n`);
  }

  private send(client: Client, set: ChangeSet): void {
    if (set.version <= client.version) return;
    client.version = set.version;
    const changes: ProjectChange[] = [];
    for (const change of set.changes) if (isProjectChange(change)) changes.push(withoutProject(change));
    // A set evaluation does not see (a key, a description) moves the version and sends nothing.
    if (changes.length === 0) return;
    const data = JSON.stringify({ version: set.version, changes });
    this.write(client, `id: ${set.version}\nevent: change\ndata: ${data}\n\n`);
  }

  private applied(set: ChangeSet): void {
    const revoked = new Set<string>();
    let deletedProject: string | undefined;
    for (const change of set.changes) {
      if (change.kind === "key.deleted") revoked.add(change.id);
      if (change.kind === "project.deleted") deletedProject = change.projectId;
    }
    for (const client of this.clients) {
      if (revoked.has(client.keyId) || client.projectId === deletedProject) {
        this.end(client);
        continue;
      }
      if (client.projectId !== set.stream) continue;
      if (client.kind === "refetch") {
        // The snapshot moved the project's evaluation version to this set's iff an answer may have changed.
        if (this.snapshot.projects.get(client.projectId)?.evaluationVersion === set.version) {
          this.sendRefetch(client, set.version);
        }
        continue;
      }
      if (client.pending) client.pending.push(set);
      else this.send(client, set);
    }
  }

  /** The snapshot read a project afresh (it missed changes the log no longer has): start its streams over. */
  private reloaded(stream: string): void {
    for (const client of this.clients) {
      // The changes that revoked its key (or deleted its project, and its keys with it) were not seen one
      // by one: a key the fresh read no longer holds (a project's key, or an admin key when the admin
      // stream was read) ends its stream, and never sees the state read now (a project created again
      // under this id is another project).
      if (!this.snapshot.keyById(client.keyId)) {
        this.end(client);
        continue;
      }
      if (client.projectId !== stream || client.pending) continue;
      if (client.kind === "refetch") {
        if (this.snapshot.projects.has(stream)) this.sendRefetch(client, this.snapshot.versions.get(stream) ?? 0);
        else this.end(client);
      } else this.sendSnapshot(client);
    }
  }

  private write(client: Client, text: string): void {
    // Ended meanwhile (its key revoked while its log was replayed, say): nothing more goes to it.
    if (!this.clients.has(client)) return;
    if (client.response.writableLength > MAX_BUFFERED_BYTES) {
      this.end(client);
      return;
    }
    client.response.write(text);
  }

  private end(client: Client): void {
    this.clients.delete(client);
    finish(client.response);
  }
}
