import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import type { FeatureModule } from "./feature-module.js";
import { eventRoutes } from "../http/routes/event.routes.js";
import { EventService } from "../features/history/event.service.js";

/** History only reads: it needs the database alone. */
export function historyModule(db: Kysely<Database>): FeatureModule<{ events: EventService }> {
  const events = new EventService(db);
  return { services: { events }, routes: (app) => eventRoutes(app, events) };
}
