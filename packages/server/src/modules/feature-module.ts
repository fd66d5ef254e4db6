// The shape each feature's module (features/<feature>/<feature>.module.ts) answers: the services it built,
// for app.ts to hand to the parts shared between features, and its routes, registered when app.ts says.
// Modules are composition, like app.ts: only app.ts imports them (see .dependency-cruiser.cjs).
import type { Kysely } from "kysely";
import type { Clock } from "../kernel/clock.js";
import type { Database } from "../db/schema.js";
import type { TypedApp } from "../http/typed-app.js";
import type { UnitOfWork } from "../write-path/unit-of-work.js";

export interface FeatureModule<Services> {
  readonly services: Services;
  /** Registers the feature's routes; app.ts calls it in the order the OpenAPI document lists them. */
  routes(app: TypedApp): void;
}

/** What most features' services are built from: the database, the write path and the clock. */
export interface FeatureDeps {
  readonly db: Kysely<Database>;
  readonly work: UnitOfWork;
  readonly clock: Clock;
}
