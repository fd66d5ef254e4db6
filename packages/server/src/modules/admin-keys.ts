import { systemClock } from "../kernel/clock.js";
import type { DatabaseHandle } from "../db/database.js";
import { createUnitOfWork } from "../write-path/create-unit-of-work.js";
import { KeyService } from "../features/keys/key.service.js";
import { PeopleState } from "../access/people-state.js";
import { PeopleService } from "../features/people/people.service.js";
import { Sessions } from "../features/people/sessions.js";
import { SignInService } from "../features/people/sign-in.service.js";

const quiet = { warn() {} };

/**
 * Key operations over an open database without a running server (`flagstaff-server admin-key`, see
 * admin-key-command.ts). Writes go through a unit of work that records, keeps in the history and
 * announces them as the server's do, so running instances pick them up; nothing here holds a snapshot.
 */
export function offlineKeyService(handle: DatabaseHandle): KeyService {
  const work = createUnitOfWork(handle, systemClock, quiet);
  return new KeyService(handle.db, work, systemClock);
}

/** People operations over an open database without a running server (`admin-key user create`). */
export function offlinePeople(handle: DatabaseHandle): { people: PeopleService; signIn: SignInService } {
  const work = createUnitOfWork(handle, systemClock, quiet);
  // Nothing here authenticates: the people state and the sessions are never consulted by create.
  const state = new PeopleState();
  const sessions = new Sessions(handle.db, systemClock, state, { idleMs: 1, maxMs: 1, secure: false });
  return {
    people: new PeopleService(handle.db, work, systemClock, state, sessions),
    signIn: new SignInService(handle.db, systemClock),
  };
}
