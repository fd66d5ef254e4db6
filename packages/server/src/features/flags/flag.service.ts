import { explain, type FlagState, isEnabledForActor, isEnabledForSegment, type ProjectState } from "@flagstaff/core";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../clock.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { AppError, type FieldError, flagNotFound, invalid, projectNotFound, segmentNotFound } from "../../errors.js";
import { newId } from "../../ids.js";
import { assemblePage, type Page, type PageQuery, toPageQuery } from "../../pagination.js";
import { ensureActors } from "../actors/actor.repository.js";
import type { CheckRecorder } from "../evaluation/check-recorder.js";
import type { Snapshot } from "../evaluation/snapshot.js";
import { entityTag, requireMatch } from "../../http/preconditions.js";
import { listMembers, type Membership } from "../actors/member-lists.js";
import { segmentNames } from "../segments/segment.repository.js";
import type { FlagRecord, FlagUpdate, WriteContext } from "../history/domain-events.js";
import type { UnitOfWork } from "../../write-path/unit-of-work.js";
import { anyNameBeyond, pageOfNames } from "../evaluation/name-scan.js";
import { findProject } from "../projects/project.repository.js";
import { existingSegmentIds, findSegment } from "../segments/segment.repository.js";
import * as repo from "./flag.repository.js";
import type { CreateFlagInput, Flag, FlagFilter, FlagSort, UpdateFlagInput } from "./flag.schemas.js";

const unique = (ids: readonly string[] | undefined): string[] => [...new Set(ids ?? [])];

/** An id both added and removed in one request is a contradiction, refused before anything is done. */
function contradictions(add: string[], remove: string[], field: string): FieldError[] {
  const removing = new Set(remove);
  return add
    .filter((id) => removing.has(id))
    .map((id) => ({ path: `/${field}`, message: `"${id}" is both added and removed` }));
}

/** A flag's state as the history records it, before and after a write. */
const flagState = (flag: Flag): FlagRecord => ({
  name: flag.name,
  description: flag.description,
  status: flag.status,
  percentageActors: flag.percentageActors,
  percentageCalls: flag.percentageCalls,
});

const target = (flag: Flag) => ({ kind: "flag", id: flag.id, name: flag.name }) as const;

export class FlagService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: UnitOfWork,
    private readonly snapshot: Snapshot,
    private readonly recorder: CheckRecorder,
    private readonly clock: Clock,
  ) {}

  /** A flag as answered: with a check noted on this instance but not yet flushed. */
  private present(flag: Flag): Flag {
    const pending = this.recorder.pendingFor(flag.id);
    if (pending === undefined) return flag;
    const at = isoTime(pending);
    return flag.latestCheckedAt === null || flag.latestCheckedAt < at ? { ...flag, latestCheckedAt: at } : flag;
  }

  private async requireProject(db: Kysely<Database> | Transaction<Database>, projectId: string) {
    if (!(await findProject(db, projectId))) throw projectNotFound(projectId);
  }

  async create(context: WriteContext, projectId: string, name: string, input: CreateFlagInput): Promise<Flag> {
    const exists = () => new AppError(409, "flag_exists", `Flag "${name}" already exists in project "${projectId}".`);
    try {
      return await this.work.write(context, projectId, async (trx) => {
        await this.requireProject(trx, projectId);
        if (await repo.findFlag(trx, projectId, name)) throw exists();
        const now = isoTime(this.clock.now());
        const flag: Flag = {
          id: newId("flg"),
          projectId,
          name,
          description: input.description ?? "",
          status: "disabled",
          percentageActors: 0,
          percentageCalls: 0,
          createdAt: now,
          updatedAt: now,
          latestCheckedAt: null,
          statusChangedAt: now,
          actorsCount: 0,
          segmentsCount: 0,
          revision: 1,
        };
        await repo.insertFlag(trx, flag);
        return {
          result: flag,
          events: [{ type: "flag.created", projectId, target: target(flag), before: null, after: flagState(flag) }],
        };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw exists();
      throw error;
    }
  }

  async get(projectId: string, name: string): Promise<Flag> {
    const flag = await repo.findFlag(this.db, projectId, name);
    if (flag) return this.present(flag);
    await this.requireProject(this.db, projectId);
    throw flagNotFound(name);
  }

  /** Changes a flag; with `ifMatch` (an If-Match header), only if it still has one of those ETags. */
  async update(
    context: WriteContext,
    projectId: string,
    name: string,
    input: UpdateFlagInput,
    ifMatch?: string,
  ): Promise<Flag> {
    const addActors = unique(input.addActors);
    const removeActors = unique(input.removeActors);
    const addSegments = unique(input.addSegments);
    const removeSegments = unique(input.removeSegments);
    const problems = [
      ...contradictions(addActors, removeActors, "addActors"),
      ...contradictions(addSegments, removeSegments, "addSegments"),
    ];
    if (problems.length > 0) throw invalid("An id cannot be added and removed in the same request.", problems);

    return this.work.write(context, projectId, async (trx) => {
      await this.requireProject(trx, projectId);
      const flag = await repo.findFlag(trx, projectId, name);
      if (!flag) throw flagNotFound(name);
      requireMatch(ifMatch, entityTag(flag.id, flag.revision), `Flag "${name}"`);
      if (addSegments.length > 0) {
        const found = await existingSegmentIds(trx, projectId, addSegments);
        const missing = addSegments.find((id) => !found.has(id));
        if (missing !== undefined) throw segmentNotFound(missing);
      }

      const actorsNow = await repo.attachedActors(trx, flag.id, [...addActors, ...removeActors]);
      const segmentsNow = await repo.attachedSegments(trx, flag.id, [...addSegments, ...removeSegments]);
      const delta = {
        addActors: addActors.filter((id) => !actorsNow.has(id)),
        removeActors: removeActors.filter((id) => actorsNow.has(id)),
        addSegments: addSegments.filter((id) => !segmentsNow.has(id)),
        removeSegments: removeSegments.filter((id) => segmentsNow.has(id)),
      };
      const next: Flag = {
        ...flag,
        description: input.description ?? flag.description,
        status: input.status ?? flag.status,
        percentageActors: input.percentageActors ?? flag.percentageActors,
        percentageCalls: input.percentageCalls ?? flag.percentageCalls,
      };
      const fieldsChanged =
        next.description !== flag.description ||
        next.status !== flag.status ||
        next.percentageActors !== flag.percentageActors ||
        next.percentageCalls !== flag.percentageCalls;
      const membershipChanged = Object.values(delta).some((ids) => ids.length > 0);
      // A request that changes nothing writes nothing: no event, updatedAt and the version stay.
      if (!fieldsChanged && !membershipChanged) return { result: this.present(flag), events: [] };

      const now = isoTime(this.clock.now());
      next.updatedAt = now;
      if (next.status !== flag.status) next.statusChangedAt = now;
      next.revision = flag.revision + 1;
      next.actorsCount = flag.actorsCount + delta.addActors.length - delta.removeActors.length;
      next.segmentsCount = flag.segmentsCount + delta.addSegments.length - delta.removeSegments.length;
      await repo.saveFlagFields(trx, next);
      await ensureActors(trx, projectId, delta.addActors, now);
      await repo.attachActors(trx, next, delta.addActors, now);
      await repo.detachActors(trx, next.id, delta.removeActors);
      await repo.attachSegments(trx, next.id, delta.addSegments, now);
      await repo.detachSegments(trx, next.id, delta.removeSegments);
      const after: FlagUpdate = {
        ...flagState(next),
        addedActors: delta.addActors,
        removedActors: delta.removeActors,
        addedSegments: delta.addSegments,
        removedSegments: delta.removeSegments,
      };
      return {
        result: this.present(next),
        events: [{ type: "flag.updated", projectId, target: target(next), before: flagState(flag), after }],
      };
    });
  }

  /** Deletes a flag with its actor and segment links; a new flag of the same name starts clean. */
  async delete(context: WriteContext, projectId: string, name: string, ifMatch?: string): Promise<void> {
    const id = await this.work.write(context, projectId, async (trx) => {
      await this.requireProject(trx, projectId);
      const flag = await repo.findFlag(trx, projectId, name);
      if (!flag) throw flagNotFound(name);
      requireMatch(ifMatch, entityTag(flag.id, flag.revision), `Flag "${name}"`);
      await repo.deleteFlag(trx, flag.id);
      return {
        result: flag.id,
        events: [{ type: "flag.deleted", projectId, target: target(flag), before: flagState(flag), after: null }],
      };
    });
    this.recorder.forget(id);
  }

  /**
   * Why the flag answers as it does for these actors, from the same snapshot and rules the check uses
   * (a read: it records no check). Segments are named from the database.
   */
  async explain(projectId: string, name: string, actorIds: readonly string[]) {
    const project = this.snapshot.projects.get(projectId);
    if (!project) throw projectNotFound(projectId);
    const flag = project.flagsByName.get(name);
    if (!flag) throw flagNotFound(name);
    const explanation = explain(flag, actorIds, project.isMember);
    const ids = new Set(explanation.actors.flatMap((a) => a.segments));
    const names = await segmentNames(this.db, projectId, [...ids]);
    const named = (id: string) => ({ id, name: names.get(id) ?? id });
    return {
      ...explanation,
      segment: explanation.segmentId === null ? null : named(explanation.segmentId),
      actors: explanation.actors.map((a) => ({ ...a, segments: a.segments.map(named) })),
    };
  }

  /** The actors attached to a flag directly, by actor id, optionally searched. */
  async listActors(projectId: string, name: string, q: string | undefined, page: PageQuery): Promise<Page<Membership>> {
    const flag = await this.get(projectId, name);
    return listMembers(this.db, "flag", flag.id, q, page);
  }

  /**
   * A page of the project's flags in the given order, filtered; with `withTotal`, also how many match.
   * The name order keeps the cursors it always had (the name alone); every other order's cursors start
   * with the order's own name, so a cursor from one order is refused by another instead of misleading it.
   */
  async list(
    projectId: string,
    filter: FlagFilter,
    paging: { limit?: number; before?: string; after?: string },
    sort: FlagSort = "name",
    withTotal = false,
  ): Promise<Page<Flag> & { total?: number }> {
    const order = repo.flagOrder(sort);
    const tagged = sort !== "name";
    const parsed = toPageQuery(paging, order.columns.length + (tagged ? 1 : 0));
    let page = parsed;
    if (tagged && parsed.direction !== "first") {
      const [token, ...key] = parsed.key;
      if (token !== sort) {
        const parameter = parsed.direction;
        throw invalid(`The ${parameter} cursor belongs to another sort order than sort=${sort}.`, [
          { path: `/query/${parameter}`, message: "must be a cursor from a previous page of the same sort" },
        ]);
      }
      page = { ...parsed, key };
    }
    await this.requireProject(this.db, projectId);
    const rows = await repo.listFlags(this.db, projectId, filter, page, order);
    const result = await assemblePage(
      page,
      rows,
      (f) => (tagged ? [sort, ...order.keyOf(f)] : order.keyOf(f)),
      (side, key) => repo.flagsBeyond(this.db, projectId, filter, side, tagged ? key.slice(1) : key, order),
    );
    const data = result.data.map((f) => this.present(f));
    if (!withTotal) return { ...result, data };
    return { ...result, data, total: await repo.countFlags(this.db, projectId, filter) };
  }

  /**
   * Flags on for an actor by the deterministic rules (attached, in an attached segment, in the actor
   * rollout): the engine in @flagstaff/core decides from the snapshot, the database fills in the page.
   */
  async listForActor(projectId: string, actorId: string, page: PageQuery): Promise<Page<Flag>> {
    await this.requireProject(this.db, projectId);
    return this.pageDecidedByEngine(projectId, page, (flag, state) => isEnabledForActor(flag, actorId, state.isMember));
  }

  /** Flags enabled for a segment (enabled, or conditional with it attached), decided by the same engine. */
  async listForSegment(projectId: string, segmentId: string, page: PageQuery): Promise<Page<Flag>> {
    await this.requireProject(this.db, projectId);
    if (!(await findSegment(this.db, projectId, segmentId))) throw segmentNotFound(segmentId);
    return this.pageDecidedByEngine(projectId, page, (flag) => isEnabledForSegment(flag, segmentId));
  }

  /**
   * A page of the flags the evaluation rules select, in name order: the snapshot picks the names (one
   * home for the rules, no SQL copy of them), the database fills in the flags' fields.
   */
  private async pageDecidedByEngine(
    projectId: string,
    page: PageQuery,
    selected: (flag: FlagState, state: ProjectState) => boolean,
  ): Promise<Page<Flag>> {
    const state = this.snapshot.projects.get(projectId);
    if (!state) return { data: [], pagination: { before: null, after: null } };
    const names = state.flagNamesInOrder();
    const matches = (flagName: string) => {
      const flag = state.flagsByName.get(flagName);
      return flag !== undefined && selected(flag, state);
    };
    const picked = pageOfNames(names, page, matches);
    const byName = new Map((await repo.findFlagsByNames(this.db, projectId, picked)).map((f) => [f.name, f]));
    const rows = picked.map((n) => byName.get(n)).filter((f): f is Flag => f !== undefined);
    const result = await assemblePage(
      page,
      rows,
      (f) => [f.name],
      (side, key) => anyNameBeyond(names, side, key[0] as string, matches),
    );
    return { ...result, data: result.data.map((f) => this.present(f)) };
  }
}
