import type { Transport } from "./http.js";
import { param } from "./params.js";
import type { Actor, ActorProfile } from "./types.js";

/** Actors of a project. */
export class ActorsApi {
  /** @internal */
  constructor(private readonly http: Transport) {}

  private path(projectId: string, actorId: string): string {
    return `/projects/${param("projectId", projectId)}/actors/${param("actorId", actorId)}`;
  }

  /** Retrieves an actor (`GET /projects/{projectId}/actors/{actorId}`); 404 actor_not_found if never seen. */
  async get(projectId: string, actorId: string): Promise<Actor> {
    return (await this.http.request<Actor>({ method: "GET", path: this.path(projectId, actorId) })).body;
  }

  /** Creates the actor or replaces its whole profile; fields left out become null (`PUT …/actors/{actorId}`). */
  async put(projectId: string, actorId: string, profile: ActorProfile = {}): Promise<Actor> {
    const path = this.path(projectId, actorId);
    return (await this.http.request<Actor>({ method: "PUT", path, body: profile })).body;
  }
}
