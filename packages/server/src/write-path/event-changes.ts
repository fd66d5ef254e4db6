import { BOOLEAN_TARGETING, type FlagChangeFields, TARGETING_FIELDS } from "@flagstaff/core";
import type { DomainEvent, FlagRecord } from "./domain-events.js";
import type { Change } from "./changes.js";

/**
 * What an event does to evaluation state: the changes the snapshot applies (and the change log records)
 * for it. The one place they are derived, so a service reports what it did once, as events, and the
 * snapshot cannot drift from the history. Events that evaluation does not see (actor profiles, webhooks,
 * a segment's name or description) answer none.
 */
export function evaluationChanges(event: DomainEvent): Change[] {
  switch (event.type) {
    case "project.created":
      return [{ kind: "project.created", projectId: event.target.id, environments: event.unpublished.environments }];
    case "project.deleted":
      return [{ kind: "project.deleted", projectId: event.target.id }];
    case "key.created":
      return [
        {
          kind: "key.created",
          id: event.target.id,
          name: event.target.name,
          hash: event.unpublished.keyHash,
          role: event.after.role,
          projectId: event.projectId,
          environment: event.after.environment ?? null,
          ...(event.after.userId === undefined ? {} : { userId: event.after.userId }),
        },
      ];
    case "key.updated":
      // The key as created, under its new name: every instance puts it again (its name is the actor's in
      // the history). A change kind every instance already applies, so older ones apply it too.
      return [
        {
          kind: "key.created",
          id: event.target.id,
          name: event.after.name,
          hash: event.unpublished.keyHash,
          role: event.after.role,
          projectId: event.projectId,
          environment: event.after.environment ?? null,
          ...(event.after.userId === undefined ? {} : { userId: event.after.userId }),
        },
      ];
    case "key.revoked":
      return [{ kind: "key.deleted", id: event.target.id }];
    case "flag.created":
      return [
        {
          kind: "flag.upserted",
          projectId: event.projectId,
          flag: flagOf(event.target.id, event.after, BOOLEAN_TARGETING),
          addActors: [],
          removeActors: [],
          addSegments: [],
          removeSegments: [],
        },
      ];
    case "flag.updated":
      return [
        // Variants are the definition's: every environment's, whichever environment the update names.
        ...(event.after.variants !== undefined &&
        JSON.stringify(event.after.variants) !== JSON.stringify(event.before.variants)
          ? [
              {
                kind: "flag.variants",
                projectId: event.projectId,
                id: event.target.id,
                variants: event.after.variants,
              } as const,
            ]
          : []),
        {
          kind: "flag.upserted",
          projectId: event.projectId,
          ...(event.environment === undefined ? {} : { environment: event.environment }),
          flag: flagOf(event.target.id, event.after, event.before),
          addActors: event.after.addedActors,
          removeActors: event.after.removedActors,
          addSegments: event.after.addedSegments,
          removeSegments: event.after.removedSegments,
        },
        // A timed rollout is a change kind of its own (readers that do not know plans stop at it).
        ...(JSON.stringify(event.after.rolloutPlan ?? null) !== JSON.stringify(event.before.rolloutPlan ?? null)
          ? [
              {
                kind: "flag.rollout",
                projectId: event.projectId,
                ...(event.environment === undefined ? {} : { environment: event.environment }),
                id: event.target.id,
                rolloutPlan: event.after.rolloutPlan ?? null,
              } as const,
            ]
          : []),
      ];
    case "flag.deleted":
    // An archived flag leaves evaluation as a deleted one does (every SDK knows that change).
    case "flag.archived":
      return [{ kind: "flag.deleted", projectId: event.projectId, id: event.target.id }];
    case "flag.restored":
      // Every environment's configuration comes back whole: targeting, links, timed rollout.
      return event.unpublished.configurations.flatMap(({ environment, flag, actors, segments }) => [
        {
          kind: "flag.upserted",
          projectId: event.projectId,
          environment,
          flag: flagOf(event.target.id, flag, {}),
          addActors: actors,
          removeActors: [],
          addSegments: segments,
          removeSegments: [],
        } as const,
        ...(flag.rolloutPlan === undefined
          ? []
          : [
              {
                kind: "flag.rollout",
                projectId: event.projectId,
                environment,
                id: event.target.id,
                rolloutPlan: flag.rolloutPlan,
              } as const,
            ]),
      ]);
    case "flag.stale":
      return [];
    case "segment.updated": {
      const { addedActors: add, removedActors: remove, conditions } = event.after;
      const changes: Change[] = [];
      if (conditions !== undefined && JSON.stringify(conditions) !== JSON.stringify(event.before.conditions ?? [])) {
        changes.push({
          kind: "segment.conditions",
          projectId: event.projectId,
          segmentId: event.target.id,
          conditions,
        });
      }
      if (add.length > 0 || remove.length > 0) {
        changes.push({ kind: "segment.members", projectId: event.projectId, segmentId: event.target.id, add, remove });
      }
      return changes;
    }
    case "segment.deleted":
      return [{ kind: "segment.deleted", projectId: event.projectId, segmentId: event.target.id }];
    case "environment.created":
      return [
        {
          kind: "environment.created",
          projectId: event.projectId,
          environment: event.target.id,
          ...(event.after.copyFrom === null ? {} : { copyFrom: event.after.copyFrom }),
        },
      ];
    case "environment.updated":
      return event.after.default && !event.before.default
        ? [{ kind: "environment.default", projectId: event.projectId, environment: event.target.id }]
        : [];
    case "environment.deleted":
      return [{ kind: "environment.deleted", projectId: event.projectId, environment: event.target.id }];
    case "segment.created": {
      const conditions = event.after.conditions ?? [];
      return conditions.length === 0
        ? []
        : [{ kind: "segment.conditions", projectId: event.projectId, segmentId: event.target.id, conditions }];
    }
    case "user.created":
    case "user.updated": {
      const { email, name, role, disabled } = event.after;
      return [{ kind: "user.put", id: event.target.id, email, name, role, disabled }];
    }
    case "user.deleted":
      return [{ kind: "user.deleted", id: event.target.id }];
    case "access.granted":
      return [{ kind: "grant.put", userId: event.target.id, grantProject: event.projectId, role: event.after.role }];
    case "access.revoked":
      return [{ kind: "grant.deleted", userId: event.target.id, grantProject: event.projectId }];
    case "actor.updated":
    case "webhook.created":
    case "webhook.updated":
    case "webhook.deleted":
    case "change_request.created":
    case "change_request.updated":
    case "change_request.reviewed":
    case "change_request.applied":
    case "change_request.overridden":
    case "change_request.cancelled":
    case "change_request.conflict":
    case "change_request.failed":
      return [];
  }
}

/**
 * A flag as evaluation sees it, from its id and its recorded state: the seed's fields, and the targeting
 * fields that differ from `unchanged` (what the flag was before the write; for a new flag, a boolean flag's
 * defaults). A field left out keeps its value where the change is applied, so a change (and the change
 * log, and a stream's replay) carries only what moved: most writes touch no targeting at all.
 */
function flagOf(id: string, state: FlagRecord, unchanged: Partial<Record<(typeof TARGETING_FIELDS)[number], unknown>>) {
  const flag: Record<string, unknown> = {
    id,
    name: state.name,
    status: state.status,
    percentageActors: state.percentageActors,
    percentageCalls: state.percentageCalls,
  };
  for (const field of TARGETING_FIELDS) {
    const value = state[field];
    if (value !== undefined && JSON.stringify(value) !== JSON.stringify(unchanged[field])) flag[field] = value;
  }
  return flag as unknown as FlagChangeFields;
}
