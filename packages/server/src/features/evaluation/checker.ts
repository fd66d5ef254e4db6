import { type Evaluation, evaluate } from "@flagstaff/core";
import type { Clock, RandomSource } from "../../clock.js";
import { environmentNotFound, flagNotFound, projectNotFound } from "../../errors.js";
import type { CheckRecorder } from "./check-recorder.js";
import type { Snapshot } from "./snapshot.js";

const NO_ACTORS: readonly string[] = [];

/**
 * Answers checks from the snapshot alone: no database I/O, no await. Each takes the environment to
 * evaluate in: the one a key is bound to, or null for the project's default.
 */
export class Checker {
  constructor(
    private readonly snapshot: Snapshot,
    private readonly recorder: CheckRecorder,
    private readonly clock: Clock,
    private readonly random: RandomSource,
  ) {}

  check(
    projectId: string,
    environment: string | null,
    flagName: string,
    actorIds: readonly string[] | undefined,
  ): Evaluation {
    // Snapshot.environmentState spelled out: the check allocates nothing, not even its answer's pair.
    const project = this.snapshot.projects.get(projectId);
    if (!project) throw projectNotFound(projectId);
    const id = environment ?? project.defaultEnvironment;
    const state = project.environments.get(id);
    if (!state) throw environmentNotFound(id);
    const flag = state.flagsByName.get(flagName);
    if (!flag) throw flagNotFound(flagName);
    this.recorder.note(id, flag.id, this.clock.now());
    return evaluate(flag, actorIds ?? NO_ACTORS, state.isMember, this.random);
  }

  /** Whether the project exists and has the flag in that environment. */
  has(projectId: string, environment: string | null, flagName: string): boolean {
    return this.snapshot.projects.get(projectId)?.state(environment)?.flagsByName.has(flagName) === true;
  }

  /** Evaluates every flag of a project's environment, in name order (OFREP bulk evaluation). */
  checkAll(
    projectId: string,
    environment: string | null,
    actorIds: readonly string[],
  ): { name: string; evaluation: Evaluation }[] {
    const { state, environment: id } = this.snapshot.environmentState(projectId, environment);
    const now = this.clock.now();
    const out: { name: string; evaluation: Evaluation }[] = [];
    for (const name of state.flagNamesInOrder()) {
      const flag = state.flagsByName.get(name);
      if (!flag) continue;
      this.recorder.note(id, flag.id, now);
      out.push({ name, evaluation: evaluate(flag, actorIds, state.isMember, this.random) });
    }
    return out;
  }

  /**
   * The version of an environment's evaluation state: it moves whenever any of its flags may answer
   * differently, and only then. Undefined for a project or environment that does not exist.
   */
  evaluationVersionOf(projectId: string, environment: string | null): number | undefined {
    return this.snapshot.projects.get(projectId)?.state(environment)?.evaluationVersion;
  }
}
