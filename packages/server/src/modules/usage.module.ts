import type { CheckRecorder } from "../features/evaluation/check-recorder.js";
import type { Snapshot } from "../features/evaluation/snapshot.js";
import { flagRepository } from "../features/flags/flag.repository.js";
import type { UsageRepository } from "../features/usage/usage.repository.js";
import { UsageRollups } from "../features/usage/usage-rollups.js";
import { UsageService } from "../features/usage/usage.service.js";
import { usageRoutes } from "../http/routes/usage.routes.js";
import type { JobRunner } from "../kernel/job-runner.js";
import type { UsageConfig } from "../kernel/config.js";
import type { FeatureDeps, FeatureModule } from "./feature-module.js";

export interface UsageModuleDeps extends FeatureDeps {
  readonly repository: UsageRepository;
  readonly recorder: CheckRecorder;
  readonly snapshot: Snapshot;
  readonly jobs: JobRunner;
  readonly config: UsageConfig;
}

/** Usage over time: the reports and series, and the roll-up job (the counter is the checker's, built in app.ts). */
export function usageModule(deps: UsageModuleDeps): FeatureModule<{ usage: UsageService }> {
  const { db, clock, repository, recorder, snapshot, jobs, config } = deps;
  const usage = new UsageService(db, repository, snapshot, recorder, flagRepository, clock, config.minuteRetentionMs);
  jobs.add(new UsageRollups(repository, clock, config));
  return { services: { usage }, routes: (app) => usageRoutes(app, usage) };
}
