import { isWeightsStep, parseInstant, type RolloutPlan } from "@flagstaff/core";
import type { ScheduleEntry } from "@flagstaff/core/schemas";
import type { Clock } from "../../kernel/clock.js";
import type { ChangeRequestService } from "./change-request.service.js";

/** The timed rollouts of a project's configurations, as the schedule reads them. */
export type PlannedConfigurations = (
  projectId: string,
  environment?: string,
) => Promise<readonly { flag: string; environment: string; plan: RolloutPlan }[]>;

const byTime = (a: ScheduleEntry, b: ScheduleEntry) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0);

/**
 * A project's schedule (GET /projects/{p}/schedule): what will happen and when, soonest first. Change
 * requests with a time that still wait, and the steps of timed rollouts still to come (a paused plan's
 * wait until it is resumed, and are left out).
 */
export class ScheduleService {
  constructor(
    private readonly requests: ChangeRequestService,
    private readonly planned: PlannedConfigurations,
    private readonly clock: Clock,
  ) {}

  async upcoming(projectId: string, environment?: string): Promise<ScheduleEntry[]> {
    const requests = await this.requests.upcoming(projectId, environment);
    const entries: ScheduleEntry[] = requests.map((request) => ({
      at: request.scheduledAt as string,
      environment: request.environment,
      kind: "change_request",
      changeRequest: { id: request.id, title: request.title, state: request.state },
      description:
        request.state === "scheduled"
          ? `applies "${request.title}" (${request.changes.map((c) => c.flag).join(", ")})`
          : `applies "${request.title}" once approved (${request.approvals} of ${request.requiredApprovals} approvals)`,
    }));
    const now = this.clock.now();
    for (const { flag, environment: env, plan } of await this.planned(projectId, environment)) {
      if (plan.pausedAt !== undefined && plan.pausedAt !== null) continue;
      for (const step of plan.steps) {
        if (!(parseInstant(step.at) > now)) continue;
        entries.push({
          at: new Date(parseInstant(step.at)).toISOString(),
          environment: env,
          kind: "rollout_step",
          flag,
          description: isWeightsStep(step)
            ? `${flag}: rule "${step.ruleId}" splits ${step.weights.map((w) => `${w.variant} ${w.weight} %`).join(", ")}`
            : `${flag}: actor rollout to ${step.percentage} %`,
        });
      }
    }
    return entries.sort(byTime);
  }
}
