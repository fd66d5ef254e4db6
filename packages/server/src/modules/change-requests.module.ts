import type { PeopleDirectory } from "../access/roles.js";
import type { JobRunner } from "../kernel/job-runner.js";
import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { ChangeRequestService } from "../features/change-requests/change-request.service.js";
import { ScheduleService } from "../features/change-requests/schedule.service.js";
import { ScheduledChanges } from "../features/change-requests/scheduled-changes.js";
import { environmentRepository } from "../features/environments/environment.repository.js";
import type { FlagService } from "../features/flags/flag.service.js";
import { flagRepository, plannedConfigurations } from "../features/flags/flag.repository.js";
import { changeRequestRoutes } from "../http/routes/change-request.routes.js";

export interface ChangeRequestsModuleDeps extends FeatureDeps {
  readonly flags: FlagService;
  readonly people: PeopleDirectory;
  readonly jobs: JobRunner;
  readonly log: { warn(obj: object, msg: string): void };
  readonly postgres: boolean;
  readonly scheduledChangeMaxAttempts: number;
}

/** Change requests, the schedule, and the job that applies scheduled requests at their time. */
export function changeRequestsModule(deps: ChangeRequestsModuleDeps): FeatureModule<{
  changeRequests: ChangeRequestService;
}> {
  const { db, work, clock, flags } = deps;
  const changeRequests = new ChangeRequestService(db, work, clock, deps.people, environmentRepository, {
    find: (executor, projectId, environment, name) => flagRepository.findFlag(executor, projectId, environment, name),
    patchIn: (trx, context, projectId, environment, name, input, options) =>
      flags.patchIn(trx, context, projectId, environment, name, input, options),
  });
  deps.jobs.add(
    new ScheduledChanges(db, clock, changeRequests, deps.log, {
      postgres: deps.postgres,
      maxAttempts: deps.scheduledChangeMaxAttempts,
    }),
  );
  const schedule = new ScheduleService(
    changeRequests,
    (projectId, environment) => plannedConfigurations(db, projectId, environment),
    clock,
  );
  return { services: { changeRequests }, routes: (app) => changeRequestRoutes(app, changeRequests, schedule) };
}
