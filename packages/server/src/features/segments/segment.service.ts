import { type Condition, NAME_MAX_LENGTH } from "@flagstaff/core";
import type { Kysely, Transaction } from "kysely";
import { type Clock, isoTime } from "../../kernel/clock.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { AppError, flagNotFound, invalid, projectNotFound, segmentNotFound } from "../../kernel/errors.js";
import { newId } from "../../kernel/ids.js";
import { assemblePage, type Page, type PageQuery } from "../../kernel/pagination.js";
import { ensureActors } from "../actors/actor.repository.js";
import type { SegmentRecord, SegmentUpdate, WriteContext } from "../../write-path/domain-events.js";
import type { UnitOfWork, WorkOutcome } from "../../write-path/unit-of-work.js";
import { refuseProtected } from "../environments/environment-guard.js";
import { findProject } from "../projects/project.repository.js";
import { environmentRepository, resolveEnvironment } from "../environments/environment.repository.js";
import * as repo from "./segment.repository.js";
import { checkSegmentConditions } from "../../db/targeting.js";
import { entityTag, requireMatch } from "../../write-path/preconditions.js";
import { listMembers, type Membership } from "../actors/member-lists.js";
import type { CreateSegmentInput, Segment, UpdateSegmentInput } from "./segment.schemas.js";

type Executor = Kysely<Database> | Transaction<Database>;

/** Trims a segment name and checks its length after trimming. */
function segmentName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || [...name].length > NAME_MAX_LENGTH) {
    throw invalid(`A segment name must be 1–${NAME_MAX_LENGTH} characters after trimming.`, [
      { path: "/name", message: `must be 1–${NAME_MAX_LENGTH} characters after trimming` },
    ]);
  }
  return name;
}

const segmentExists = (name: string) =>
  new AppError(409, "segment_exists", `A segment named "${name}" already exists.`);

/** A segment's state as the history records it. */
const segmentState = (row: repo.SegmentRow): SegmentRecord => ({
  name: row.name,
  description: row.description,
  conditions: row.conditions,
});

const target = (row: { id: string; name: string }) => ({ kind: "segment", id: row.id, name: row.name }) as const;

export class SegmentService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly work: UnitOfWork,
    private readonly clock: Clock,
  ) {}

  private async requireProject(db: Executor, projectId: string) {
    if (!(await findProject(db, projectId))) throw projectNotFound(projectId);
  }

  /** Adds `latestActors` to stored segments with one query for the lot. */
  private async withLatestActors(db: Executor, rows: repo.SegmentRow[]): Promise<Segment[]> {
    const latest = await repo.latestActors(
      db,
      rows.map((r) => r.id),
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      createdAt: r.createdAt,
      latestActors: latest.get(r.id) ?? [],
      actorsCount: r.actorsCount,
      conditions: r.conditions as Segment["conditions"],
      revision: r.revision,
    }));
  }

  private async page(
    page: PageQuery,
    rows: repo.SegmentRow[],
    beyond: (side: "before" | "after", key: readonly string[]) => Promise<boolean>,
  ) {
    const result = await assemblePage(page, rows, (s) => [s.name], beyond);
    return { data: await this.withLatestActors(this.db, result.data), pagination: result.pagination };
  }

  async create(context: WriteContext, projectId: string, input: CreateSegmentInput): Promise<Segment> {
    try {
      return await this.work.write(context, projectId, (trx) => this.createIn(trx, projectId, input));
    } catch (error) {
      if (isUniqueViolation(error)) throw segmentExists(input.name.trim());
      throw error;
    }
  }

  /**
   * A segment's create inside a write's transaction (its own route, or an applied project document, which
   * gives the id the document names).
   */
  async createIn(
    trx: Transaction<Database>,
    projectId: string,
    input: CreateSegmentInput,
    id?: string,
  ): Promise<WorkOutcome<Segment>> {
    const name = segmentName(input.name);
    if (input.conditions !== undefined) checkSegmentConditions(input.conditions);
    await this.requireProject(trx, projectId);
    if (await repo.segmentNameTaken(trx, projectId, name)) throw segmentExists(name);
    if (id !== undefined && (await repo.segmentIdTaken(trx, id))) {
      throw new AppError(
        409,
        "segment_exists",
        `A segment with id "${id}" exists already, in another project: segment ids are unique across the service. Give it another id.`,
      );
    }
    const row: repo.SegmentRow = {
      id: id ?? newId("seg"),
      projectId,
      name,
      description: input.description ?? "",
      createdAt: isoTime(this.clock.now()),
      nextActorSeq: 1,
      revision: 1,
      actorsCount: 0,
      conditions: (input.conditions ?? []) as Condition[],
    };
    await repo.insertSegment(trx, row);
    return {
      result: {
        id: row.id,
        name,
        description: row.description,
        createdAt: row.createdAt,
        latestActors: [],
        actorsCount: 0,
        conditions: row.conditions as Segment["conditions"],
        revision: 1,
      },
      events: [{ type: "segment.created", projectId, target: target(row), before: null, after: segmentState(row) }],
    };
  }

  async get(projectId: string, segmentId: string): Promise<Segment> {
    const row = await repo.findSegment(this.db, projectId, segmentId);
    if (!row) {
      await this.requireProject(this.db, projectId);
      throw segmentNotFound(segmentId);
    }
    const [segment] = await this.withLatestActors(this.db, [row]);
    return segment as Segment;
  }

  async update(
    context: WriteContext,
    projectId: string,
    segmentId: string,
    input: UpdateSegmentInput,
    ifMatch?: string,
  ): Promise<Segment> {
    try {
      return await this.work.write(context, projectId, (trx) =>
        this.updateIn(trx, projectId, segmentId, input, ifMatch),
      );
    } catch (error) {
      if (isUniqueViolation(error) && input.name !== undefined) throw segmentExists(input.name.trim());
      throw error;
    }
  }

  /** A segment's change inside a write's transaction (its own route, or an applied project document). */
  async updateIn(
    trx: Transaction<Database>,
    projectId: string,
    segmentId: string,
    input: UpdateSegmentInput,
    ifMatch?: string,
  ): Promise<WorkOutcome<Segment>> {
    const name = input.name === undefined ? undefined : segmentName(input.name);
    if (input.conditions !== undefined) checkSegmentConditions(input.conditions);
    const add = [...new Set(input.addActors ?? [])];
    const remove = [...new Set(input.removeActors ?? [])];
    const removing = new Set(remove);
    const both = add.filter((id) => removing.has(id));
    if (both.length > 0) {
      throw invalid(
        "An id cannot be added and removed in the same request.",
        both.map((id) => ({ path: "/addActors", message: `"${id}" is both added and removed` })),
      );
    }
    await this.requireProject(trx, projectId);
    const row = await repo.findSegment(trx, projectId, segmentId);
    if (!row) throw segmentNotFound(segmentId);
    requireMatch(ifMatch, entityTag(row.id, row.revision), `Segment "${segmentId}"`);
    if (name !== undefined && name !== row.name && (await repo.segmentNameTaken(trx, projectId, name))) {
      throw segmentExists(name);
    }
    const members = await repo.currentMembers(trx, segmentId, [...add, ...remove]);
    const added = add.filter((id) => !members.has(id));
    const removed = remove.filter((id) => members.has(id));
    const next: repo.SegmentRow = {
      ...row,
      name: name ?? row.name,
      description: input.description ?? row.description,
      nextActorSeq: row.nextActorSeq + added.length,
      conditions: (input.conditions as Condition[] | undefined) ?? row.conditions,
    };
    const changed =
      next.name !== row.name ||
      next.description !== row.description ||
      JSON.stringify(next.conditions) !== JSON.stringify(row.conditions) ||
      added.length > 0 ||
      removed.length > 0;
    if (changed) {
      next.revision = row.revision + 1;
      next.actorsCount = row.actorsCount + added.length - removed.length;
      const now = isoTime(this.clock.now());
      await repo.saveSegment(trx, next, now);
      await ensureActors(trx, projectId, added, now);
      await repo.addMembers(trx, row, added, now);
      await repo.removeMembers(trx, segmentId, removed);
    }
    const [segment] = await this.withLatestActors(trx, [next]);
    const after: SegmentUpdate = { ...segmentState(next), addedActors: added, removedActors: removed };
    return {
      result: segment as Segment,
      events: changed
        ? [{ type: "segment.updated", projectId, target: target(next), before: segmentState(row), after }]
        : [],
    };
  }

  /**
   * Deletes a segment; it is detached from every flag and its memberships go with it. A segment that rules
   * name (in any environment) is in use: deleting it would change what those rules serve, so it is refused
   * (409 segment_in_use, naming where) until the rules stop naming it. Detaching it where it is attached
   * changes those configurations: protected environments' need their right.
   */
  async delete(context: WriteContext, projectId: string, segmentId: string, ifMatch?: string): Promise<void> {
    await this.work.write(context, projectId, (trx) => this.deleteIn(trx, context, projectId, segmentId, ifMatch));
  }

  /** A segment's delete inside a write's transaction (its own route, or an applied project document). */
  async deleteIn(
    trx: Transaction<Database>,
    context: WriteContext,
    projectId: string,
    segmentId: string,
    ifMatch?: string,
  ): Promise<WorkOutcome<undefined>> {
    await this.requireProject(trx, projectId);
    const row = await repo.findSegment(trx, projectId, segmentId);
    if (!row) throw segmentNotFound(segmentId);
    requireMatch(ifMatch, entityTag(row.id, row.revision), `Segment "${segmentId}"`);
    const uses = await repo.rulesNamingSegment(trx, projectId, segmentId);
    if (uses.length > 0) {
      const named = uses.map((use) => `flag "${use.flag}" in environment "${use.environment}"`);
      throw new AppError(
        409,
        "segment_in_use",
        `Segment "${row.name}" (${segmentId}) is named by the rules of ${named.slice(0, 5).join("; ")}${named.length > 5 ? `; … (${named.length} in all)` : ""}: change those rules first.`,
      );
    }
    const attached = await repo.environmentsAttached(trx, segmentId);
    await refuseProtected(
      environmentRepository,
      trx,
      context,
      projectId,
      attached,
      `Deleting segment "${row.name}", attached to flags there,`,
    );
    await repo.detachFromEveryFlag(trx, segmentId, isoTime(this.clock.now()));
    await repo.deleteSegment(trx, segmentId);
    return {
      result: undefined,
      events: [{ type: "segment.deleted", projectId, target: target(row), before: segmentState(row), after: null }],
    };
  }

  /** A segment's members, by actor id, optionally searched. */
  async listActors(
    projectId: string,
    segmentId: string,
    q: string | undefined,
    page: PageQuery,
  ): Promise<Page<Membership>> {
    const segment = await this.get(projectId, segmentId);
    return listMembers(this.db, "segment", segment.id, q, page);
  }

  async list(projectId: string, page: PageQuery): Promise<Page<Segment>> {
    await this.requireProject(this.db, projectId);
    const rows = await repo.listSegments(this.db, projectId, page);
    return this.page(page, rows, (side, key) => repo.segmentsBeyond(this.db, projectId, side, key));
  }

  /** The segments attached to a flag in an environment (null: the project's default). */
  async listForFlag(
    projectId: string,
    environment: string | null,
    flagName: string,
    page: PageQuery,
  ): Promise<Page<Segment>> {
    const environmentId = await resolveEnvironment(this.db, projectId, environment);
    const configId = await repo.flagConfigId(this.db, projectId, environmentId, flagName);
    if (configId === undefined) throw flagNotFound(flagName);
    const rows = await repo.listSegmentsForFlag(this.db, configId, page);
    return this.page(page, rows, (side, key) => repo.segmentsForFlagBeyond(this.db, configId, side, key));
  }

  /** Segments an actor has been added to; an actor never seen simply has none. */
  async listForActor(projectId: string, actorId: string, page: PageQuery): Promise<Page<Segment>> {
    await this.requireProject(this.db, projectId);
    const rows = await repo.listSegmentsForActor(this.db, projectId, actorId, page);
    return this.page(page, rows, (side, key) => repo.segmentsForActorBeyond(this.db, projectId, actorId, side, key));
  }
}
