import type { Kysely, Transaction } from "kysely";
import type { Database } from "../../db/schema.js";
import type { Project } from "../projects/project.schemas.js";
import type { Environment } from "./environment.schemas.js";

// What the environments' service reads and writes, and what other services read of environments: the
// seam between the decisions and the SQL. The Kysely implementation is `environmentRepository`
// (environment.repository.ts); unit tests use an in-memory fake (test/unit/fakes/). Every method takes the
// executor it runs on: a write's methods the transaction the unit of work opened, so a write stays one
// transaction.

type Executor = Kysely<Database> | Transaction<Database>;
type Trx = Transaction<Database>;

/** An environment with its place in the project's order. */
export interface PlacedEnvironment {
  readonly environment: Environment;
  readonly position: number;
}

/** What the environments of a project answer to the services of other features. */
export interface EnvironmentReads {
  /** A project's environments in their order. */
  listEnvironments(db: Executor, projectId: string): Promise<Environment[]>;
  /**
   * The id of the environment a request acts on: the one named (which must exist), or the project's
   * default. Throws the 404 of an unknown project or environment.
   */
  resolveEnvironment(db: Executor, projectId: string, named: string | null): Promise<string>;
  countEnvironments(db: Executor, projectId: string): Promise<number>;
  /** Which of these environments of the project are protected, in id order. */
  protectedAmong(db: Executor, projectId: string, ids: readonly string[]): Promise<string[]>;
  /** The approvals a change request needs in an environment (0 for an unknown one). */
  requiredApprovals(db: Executor, projectId: string, environment: string): Promise<number>;
}

export interface EnvironmentStore extends EnvironmentReads {
  findProject(db: Executor, projectId: string): Promise<Project | undefined>;
  /** A project's environments in their order, with their positions (what the list's cursors hold). */
  listPlacedEnvironments(db: Executor, projectId: string): Promise<PlacedEnvironment[]>;
  findEnvironment(db: Executor, projectId: string, id: string): Promise<Environment | undefined>;
  /** Adds an environment last in its project's order. */
  insertEnvironment(trx: Trx, environment: Environment): Promise<void>;
  /**
   * Gives a new environment a configuration of every flag of its project: a copy of `copyFrom`'s (status,
   * percentages, targeting, attached actors and segments), or disabled with nothing attached.
   */
  insertEnvironmentConfigurations(
    trx: Trx,
    projectId: string,
    environment: string,
    copyFrom: string | undefined,
    at: string,
  ): Promise<void>;
  saveEnvironment(trx: Trx, environment: Environment): Promise<void>;
  /** Puts a project's environments in this order (every one of them, by id). */
  reorderEnvironments(trx: Trx, projectId: string, ids: readonly string[]): Promise<void>;
  /** Makes no environment of the project the default (the caller then makes one so). */
  clearDefault(trx: Trx, projectId: string, at: string): Promise<void>;
  /** The keys bound to an environment. */
  keysOf(db: Executor, projectId: string, environment: string): Promise<{ id: string; name: string; role: string }[]>;
  /** Deletes the keys bound to an environment. */
  deleteKeysOf(trx: Trx, projectId: string, environment: string): Promise<void>;
  /** Deletes an environment with its flags' configurations and their actor and segment links. */
  deleteEnvironment(trx: Trx, projectId: string, id: string): Promise<void>;
}
