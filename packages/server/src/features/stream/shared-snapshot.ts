import type { ProjectState } from "@flagstaff/core";
import { gzipMember } from "./gzip-members.js";
import { eventChunks } from "./snapshot-event.js";

/**
 * A project environment's `snapshot` event at one project version, encoded once for every stream that
 * opens at that version. Its chunks (about 64 KiB each, serialized a slice at a time) are made as the
 * fastest reader needs them, kept as bytes, and written as the same Buffers to every stream: 200 SDKs
 * reconnecting after a deploy cost one serialization of the state, not 200. Each stream reads it through
 * a cursor of its own (`reader`), so a slow reader never holds back a fast one.
 */
export class SharedSnapshot {
  private readonly chunks: Buffer[] = [];
  private source: Iterator<string> | undefined;
  /** Bytes of the chunks made so far. */
  bytes = 0;

  constructor(
    readonly version: number,
    state: ProjectState,
  ) {
    // The state is taken now, as the plain arrays toJSON builds: the snapshot changes it in place as
    // changes come, and the event must be the state at this version.
    this.source = eventChunks(version, "snapshot", { version, state: state.toJSON() });
  }

  /** The chunk at `index`, made (with those before it) if no reader has needed it yet; undefined past the end. */
  private chunk(index: number): Buffer | undefined {
    while (this.chunks.length <= index && this.source !== undefined) {
      const next = this.source.next();
      if (next.done === true) this.source = undefined;
      else {
        const bytes = Buffer.from(next.value, "utf8");
        this.chunks.push(bytes);
        this.bytes += bytes.length;
      }
    }
    return this.chunks[index];
  }

  /** A cursor over the event's chunks, from the first; `gzip`: each chunk as a gzip member (gzip-members.ts). */
  reader(gzip = false): Iterator<Buffer> {
    let index = 0;
    return {
      next: () => {
        const value = this.chunk(index);
        if (value === undefined) return { done: true, value: undefined };
        index++;
        return { done: false, value: gzip ? gzipMember(value) : value };
      },
    };
  }
}

/**
 * The snapshot event of each environment's state at its current version: one SharedSnapshot per state
 * object (a project's environment; a reread project's states are new objects), forgotten when the
 * project's version moves. A forgotten one lives on only while streams still read it.
 */
export class SharedSnapshots {
  private readonly byState = new WeakMap<ProjectState, SharedSnapshot>();

  /** The state's snapshot event at `version`; `made`: it was not encoded before (the first stream at it). */
  of(state: ProjectState, version: number): { snapshot: SharedSnapshot; made: boolean } {
    const last = this.byState.get(state);
    if (last !== undefined && last.version === version) return { snapshot: last, made: false };
    const snapshot = new SharedSnapshot(version, state);
    this.byState.set(state, snapshot);
    return { snapshot, made: true };
  }

  /** Forgets a state's snapshot: its project moved on, and the next stream encodes the new state. */
  forget(state: ProjectState): void {
    this.byState.delete(state);
  }
}
