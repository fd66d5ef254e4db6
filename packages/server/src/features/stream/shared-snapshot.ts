import type { ProjectState } from "@flagstaff/core";
import { gzipMember } from "./gzip-members.js";
import { eventChunks } from "./snapshot-event.js";

/** Chunks whose gzip members go out in one write (a chunk compresses to a tenth of its 64 KiB or less). */
const GZIP_GROUP = 16;

/**
 * A project environment's `snapshot` event at one project version, encoded once for every stream that
 * opens at that version. Its chunks (about 64 KiB each, serialized a slice at a time) are made as the
 * fastest reader needs them, kept as bytes, and written as the same Buffers to every stream: 200 SDKs
 * reconnecting after a deploy cost one serialization of the state, not 200. Each stream reads it through
 * a cursor of its own (`reader`), so a slow reader never holds back a fast one.
 */
export class SharedSnapshot {
  private readonly chunks: Buffer[] = [];
  /** The gzip member of each chunk made so far, for compressed streams, and their groups by first index. */
  private readonly members: Buffer[] = [];
  private readonly groups = new Map<number, { bytes: Buffer; end: number }>();
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

  /** The gzip member of the chunk at `index` (made, with the chunk, if no reader has needed it yet). */
  private member(index: number): Buffer | undefined {
    while (this.members.length <= index) {
      const plain = this.chunk(this.members.length);
      if (plain === undefined) return undefined;
      this.members.push(gzipMember(plain));
    }
    return this.members[index];
  }

  /**
   * The members of GZIP_GROUP chunks from `start` in one buffer, once they are all made (the last group
   * once the event is): a reader that comes after the first writes a compressed snapshot in a few writes.
   * Undefined while they are not: the first reader makes them one chunk at a time, within the turn's
   * budget, and writes them one by one.
   */
  private group(start: number): { bytes: Buffer; end: number } | undefined {
    if (start % GZIP_GROUP !== 0) return undefined;
    const made = this.groups.get(start);
    if (made !== undefined) return made;
    const whole = this.source === undefined && this.members.length === this.chunks.length;
    const end = Math.min(start + GZIP_GROUP, whole ? this.members.length : start + GZIP_GROUP);
    if (end <= start + 1 || this.members.length < end) return undefined;
    const group = { bytes: Buffer.concat(this.members.slice(start, end)), end };
    this.groups.set(start, group);
    return group;
  }

  /** A cursor over the event's chunks, from the first; `gzip`: compressed (gzip-members.ts). */
  reader(gzip = false): Iterator<Buffer> {
    let index = 0;
    return {
      next: () => {
        const group = gzip ? this.group(index) : undefined;
        if (group !== undefined) {
          index = group.end;
          return { done: false, value: group.bytes };
        }
        const value = gzip ? this.member(index) : this.chunk(index);
        if (value === undefined) return { done: true, value: undefined };
        index++;
        return { done: false, value };
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
