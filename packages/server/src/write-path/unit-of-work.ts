import { randomUUID } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../kernel/clock.js";
import type { Database } from "../db/schema.js";
import { busy } from "../kernel/errors.js";
import { newEventId } from "../kernel/ids.js";
import type { ChangeSet } from "./changes.js";
import { evaluationChanges } from "./event-changes.js";
import { nextStreamVersion, recordChangeSet } from "./change-log.js";
import { type DomainEvent, publishedEvent, type StoredEvent, type WriteContext } from "./domain-events.js";
import { EventBus } from "./event-bus.js";
import { insertEvents } from "./event-log.js";

/** What the work of a write answers: its result and its events. */
export interface WorkOutcome<T> {
  readonly result: T;
  /**
   * None when the write changed nothing: then nothing is stored and no version is taken. What the
   * evaluation snapshot must apply is derived from these (see evaluationChanges).
   */
  readonly events: readonly DomainEvent[];
}

/** A committed write as the bus carries it, after commit. */
export interface CommittedWrite {
  readonly context: WriteContext;
  readonly events: readonly StoredEvent[];
  readonly changeSet: ChangeSet;
}

/**
 * What a write's work may leave for when its transaction is over: work that belongs after the commit
 * (telling the dispatcher there is something to send) or that gives back what the write held in memory.
 */
export interface WriteHooks {
  /**
   * Runs `fn` once the write committed and its bus listeners ran (so this instance's snapshot has the
   * change), in the order the hooks were added. A hook that throws is logged; the write stays committed.
   */
  afterCommit(fn: () => void): void;
  /** Runs `fn` when the write rolled back instead (an error, or no event): nothing of it was stored. */
  afterRollback(fn: () => void): void;
}

export interface UnitOfWorkLogger {
  warn(obj: object, msg: string): void;
}

export interface UnitOfWorkOptions {
  /** Announces a change set to other instances, inside the write transaction (PostgreSQL NOTIFY). */
  readonly announce?: (trx: Transaction<Database>, set: ChangeSet) => Promise<void>;
  /** Queues what the stored events must cause later (webhook deliveries), inside the write transaction. */
  readonly enqueue?: (trx: Transaction<Database>, events: readonly StoredEvent[], hooks: WriteHooks) => Promise<void>;
}

/**
 * What a service writes through: the unit of work's `write`. Services declare this rather than the class,
 * so that their unit tests can run them on an in-memory fake (test/unit/fakes/).
 */
export type Writes = Pick<UnitOfWork, "write">;

/**
 * Writes to one stream waiting their turn beyond this many are refused as busy: a project whose writes
 * are stuck (its version row held elsewhere) must not pile up requests without bound.
 */
const MAX_QUEUED_WRITES = 256;
/**
 * Writes to one stream that may hold a connection at once. They serialise on the stream's version row
 * anyway, so more would only wait on that lock inside PostgreSQL, each holding a pooled connection.
 */
const WRITES_PER_STREAM = 1;

/** Thrown out of a transaction that changed nothing, to roll it back (and so leave the version alone). */
class NothingChanged<T> {
  constructor(readonly result: T) {}
}

/**
 * The one way a write reaches the database. `write` runs the work in one transaction on a stream (a
 * project id, or GLOBAL_STREAM), after locking the stream's version row. When the work reports events,
 * the same transaction stores them in the history, queues their webhook deliveries, records the change set under
 * the stream's next version and announces it; after commit they are published on `bus`, which the
 * snapshot, the metrics and (later) webhooks and streams follow. A write that reports no event is rolled
 * back: it stores nothing and moves no version. What belongs after the transaction (sending what it queued,
 * giving back what it held in memory) the work and `enqueue` leave as `WriteHooks`, run once it is over.
 */
export class UnitOfWork {
  readonly bus = new EventBus<CommittedWrite>();
  /** Identifies this instance in the change sets it writes. */
  readonly instanceId = randomUUID();
  /** Per stream: writes holding a slot, and the writes waiting for one, in arrival order. */
  private readonly writeSlots = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: UnitOfWorkLogger,
    private readonly options: UnitOfWorkOptions = {},
  ) {}

  /**
   * Runs `work` in one transaction on `stream` for the caller in `context`. Any error rolls the whole
   * write back. Writes to one stream take turns here, before they take a pooled connection, so a busy
   * project cannot hold every connection while its writes wait for the version row's lock.
   */
  async write<T>(
    context: WriteContext,
    stream: string,
    work: (trx: Transaction<Database>, hooks: WriteHooks) => Promise<WorkOutcome<T>>,
  ): Promise<T> {
    const release = await this.takeTurn(stream);
    const committedHooks: (() => void)[] = [];
    const rolledBackHooks: (() => void)[] = [];
    const hooks: WriteHooks = {
      afterCommit: (fn) => void committedHooks.push(fn),
      afterRollback: (fn) => void rolledBackHooks.push(fn),
    };
    let committed: CommittedWrite;
    let result: T;
    try {
      ({ committed, result } = await this.db.transaction().execute(async (trx) => {
        // Taken first: its row lock serialises writes to one stream across instances. A write that
        // changes nothing rolls back, and the version with it.
        const version = await nextStreamVersion(trx, stream);
        const outcome = await work(trx, hooks);
        if (outcome.events.length === 0) throw new NothingChanged(outcome.result);
        const now = this.clock.now();
        const createdAt = isoTime(now);
        const events = outcome.events.map((event) =>
          publishedEvent(event, { id: newEventId(now), createdAt, context }),
        );
        await insertEvents(trx, events);
        await this.options.enqueue?.(trx, events, hooks);
        const changeSet: ChangeSet = {
          stream,
          version,
          changes: outcome.events.flatMap(evaluationChanges),
          at: now,
          origin: this.instanceId,
        };
        await recordChangeSet(trx, changeSet, createdAt);
        await this.options.announce?.(trx, changeSet);
        return { committed: { context, events, changeSet }, result: outcome.result };
      }));
    } catch (error) {
      this.runHooks(rolledBackHooks, "an after-rollback hook failed");
      if (error instanceof NothingChanged) return error.result as T;
      throw error;
    } finally {
      release();
    }
    try {
      await this.bus.publish(committed);
    } catch (error) {
      // The write is committed: a failing listener must not turn it into an error for the caller.
      this.logger.warn({ err: error }, "a listener failed on a committed write");
    }
    this.runHooks(committedHooks, "an after-commit hook failed");
    return result;
  }

  /** Runs every hook, each apart: one that throws is logged and keeps none of the others from running. */
  private runHooks(hooks: readonly (() => void)[], message: string): void {
    for (const hook of hooks) {
      try {
        hook();
      } catch (error) {
        this.logger.warn({ err: error }, message);
      }
    }
  }

  /**
   * Waits for one of the stream's WRITES_PER_STREAM slots (first come, first served); answers the
   * function that hands the slot on when this write is done.
   */
  private async takeTurn(stream: string): Promise<() => void> {
    let slots = this.writeSlots.get(stream);
    if (!slots) {
      slots = { active: 0, waiting: [] };
      this.writeSlots.set(stream, slots);
    }
    const mine = slots;
    if (mine.active < WRITES_PER_STREAM) {
      mine.active++;
    } else {
      if (mine.waiting.length >= MAX_QUEUED_WRITES) {
        throw busy(`Too many writes to "${stream}" are waiting; nothing was changed. Try again shortly.`);
      }
      await new Promise<void>((resolve) => mine.waiting.push(resolve));
    }
    return () => {
      const next = mine.waiting.shift();
      if (next) next();
      else if (--mine.active === 0) this.writeSlots.delete(stream);
    };
  }
}
