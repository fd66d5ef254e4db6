import { type Evaluation, evaluate } from "@flagstaff/core";
import type { Clock, RandomSource } from "../../clock.js";
import { flagNotFound, projectNotFound } from "../../errors.js";
import type { CheckRecorder } from "./check-recorder.js";
import type { Snapshot } from "./snapshot.js";

const NO_ACTORS: readonly string[] = [];

/** Answers checks from the snapshot alone: no database I/O, no await. */
export class Checker {
  constructor(
    private readonly snapshot: Snapshot,
    private readonly recorder: CheckRecorder,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  check(projectId: string, flagName: string, actorIds: readonly string[] | undefined): Evaluation {
    const project = this.snapshot.projects.get(projectId);
    if (!project) throw projectNotFound(projectId);
    const flag = project.flagsByName.get(flagName);
    if (!flag) throw flagNotFound(flagName);
    this.recorder.note(flag.id, this.clock.now());
    return evaluate(flag, actorIds ?? NO_ACTORS, project.isMember, this.random);
  }

  /** Whether the project exists and has the flag. */
  has(projectId: string, flagName: string): boolean {
    return this.snapshot.projects.get(projectId)?.flagsByName.has(flagName) === true;
  }

  /** Evaluates every flag of a project, in name order (OFREP bulk evaluation). */
  checkAll(projectId: string, actorIds: readonly string[]): { name: string; evaluation: Evaluation }[] {
    const project = this.snapshot.projects.get(projectId);
    if (!project) throw projectNotFound(projectId);
    const now = this.clock.now();
    const out: { name: string; evaluation: Evaluation }[] = [];
    for (const name of project.flagNamesInOrder()) {
      const flag = project.flagsByName.get(name);
      if (!flag) continue;
      this.recorder.note(flag.id, now);
      out.push({ name, evaluation: evaluate(flag, actorIds, project.isMember, this.random) });
    }
    return out;
  }

  /**
   * The version of a project's evaluation state: it moves whenever any of its flags may answer
   * differently, and only then. Undefined for a project that does not exist.
   */
  evaluationVersionOf(projectId: string): number | undefined {
    return this.snapshot.projects.get(projectId)?.evaluationVersion;
  }
}
