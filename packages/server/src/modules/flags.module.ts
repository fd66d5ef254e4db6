import type { CheckRecorder } from "../features/evaluation/check-recorder.js";
import { FlagExplainer } from "../features/evaluation/explain.js";
import { type FlagRows, FlagListings } from "../features/evaluation/flag-listing.js";
import type { Snapshot } from "../features/evaluation/snapshot.js";
import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { FlagCopier } from "../features/flags/flag-copy.js";
import { flagRoutes } from "../http/routes/flag.routes.js";
import { FlagService } from "../features/flags/flag.service.js";
import type { Flag } from "../features/flags/flag.schemas.js";
import { FlagPresenter } from "../features/flags/flag-presenter.js";
import { findFlagsByNames, flagRepository } from "../features/flags/flag.repository.js";
import { FlagArchiver } from "../features/flags/flag-archive.js";
import type { StaleSettings } from "../features/flags/stale-rules.js";
import { resolveEnvironment } from "../features/environments/environment.repository.js";
import { findSegment, segmentNames } from "../features/segments/segment.repository.js";

export interface FlagsModuleDeps extends FeatureDeps {
  readonly recorder: CheckRecorder;
  readonly snapshot: Snapshot;
  readonly stale: StaleSettings;
}

/** The flag writes, and the reads answered from the snapshot (listings, explanations). */
export function flagsModule({ db, work, clock, recorder, snapshot, stale }: FlagsModuleDeps): FeatureModule<{
  flags: FlagService;
}> {
  const flags = new FlagService(db, work, recorder, clock, flagRepository, stale);
  const archiver = new FlagArchiver(work, recorder, clock);
  const copier = new FlagCopier(work, recorder, clock);
  const explainer = new FlagExplainer((projectId, ids) => segmentNames(db, projectId, ids), snapshot, clock);
  const presenter = new FlagPresenter(recorder, clock);
  const rows: FlagRows<Flag> = {
    resolveEnvironment: (projectId, environment) => resolveEnvironment(db, projectId, environment),
    segmentExists: async (projectId, id) => (await findSegment(db, projectId, id)) !== undefined,
    findFlagsByNames: (projectId, environment, names) => findFlagsByNames(db, projectId, environment, names),
    present: (flags, ownOnly) => presenter.present(db, flags, ownOnly),
  };
  const listings = new FlagListings(rows, snapshot, clock);
  return { services: { flags }, routes: (app) => flagRoutes(app, { flags, copier, archiver, explainer, listings }) };
}
