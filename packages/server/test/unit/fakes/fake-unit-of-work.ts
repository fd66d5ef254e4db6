import type { Transaction } from "kysely";
import type { Database } from "../../../src/db/schema.js";
import type { DomainEvent, WriteContext } from "../../../src/write-path/domain-events.js";
import type { WorkOutcome, WriteHooks, Writes } from "../../../src/write-path/unit-of-work.js";
import type { MemoryStores } from "./memory-stores.js";

/**
 * Stands for the database where a service is run on fakes: any use of it (a query written in the service
 * instead of its store) fails the test, naming what was used.
 */
export const NO_DATABASE = new Proxy(
  {},
  {
    get(_target, property) {
      throw new Error(`The service used the database directly (.${String(property)}): it must go through its store.`);
    },
  },
) as Transaction<Database>;

/** One committed write, as the fake unit of work keeps it. */
export interface FakeWrite {
  readonly context: WriteContext;
  readonly stream: string;
  readonly events: readonly DomainEvent[];
}

/**
 * The unit of work over in-memory stores: a write's work runs on a copy of the tables' state taken before
 * it, put back when the work throws or reports no event (as the real one rolls back); the events of each
 * committed write are kept, in order, in `writes`. Its hooks run as the real ones do, after the write.
 */
export class FakeUnitOfWork implements Writes {
  readonly writes: FakeWrite[] = [];

  constructor(private readonly stores: MemoryStores) {}

  /** The events of every committed write, in order. */
  get events(): DomainEvent[] {
    return this.writes.flatMap((w) => w.events);
  }

  async write<T>(
    context: WriteContext,
    stream: string,
    work: (trx: Transaction<Database>, hooks: WriteHooks) => Promise<WorkOutcome<T>>,
  ): Promise<T> {
    const before = structuredClone(this.stores.tables);
    const committed: (() => void)[] = [];
    const rolledBack: (() => void)[] = [];
    const hooks: WriteHooks = {
      afterCommit: (fn) => void committed.push(fn),
      afterRollback: (fn) => void rolledBack.push(fn),
    };
    let outcome: WorkOutcome<T>;
    try {
      outcome = await work(NO_DATABASE, hooks);
    } catch (error) {
      this.stores.tables = before;
      for (const fn of rolledBack) fn();
      throw error;
    }
    if (outcome.events.length === 0) {
      this.stores.tables = before;
      for (const fn of rolledBack) fn();
      return outcome.result;
    }
    this.writes.push({ context, stream, events: outcome.events });
    for (const fn of committed) fn();
    return outcome.result;
  }
}
