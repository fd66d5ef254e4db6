import { Type } from "typebox";
import { ActorParams } from "../../kernel/schemas.js";
import { errorResponses } from "../schemas.js";
import type { TypedApp } from "../typed-app.js";
import { writeContext } from "../write-context.js";
import { PutActorBody } from "../../features/actors/actor.schemas.js";
import type { ActorService } from "../../features/actors/actor.service.js";

export function actorRoutes(app: TypedApp, actors: ActorService): void {
  app.get(
    "/projects/:projectId/actors/:actorId",
    {
      config: { access: "read" },
      schema: {
        tags: ["actors"],
        summary: "Retrieve an actor (extension)",
        params: ActorParams,
        response: { 200: Type.Ref("Actor"), ...errorResponses(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => actors.get(request.params.projectId, request.params.actorId),
  );

  app.put(
    "/projects/:projectId/actors/:actorId",
    {
      config: { access: "write" },
      schema: {
        tags: ["actors"],
        summary: "Create or replace an actor's profile (extension)",
        description: "201 when the actor is new, 200 when it existed. Fields left out are set to null.",
        params: ActorParams,
        body: PutActorBody,
        response: {
          200: Type.Ref("Actor"),
          201: Type.Ref("Actor"),
          ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { actor, created } = await actors.put(
        writeContext(request),
        request.params.projectId,
        request.params.actorId,
        request.body ?? {},
      );
      return reply.code(created ? 201 : 200).send(actor);
    },
  );
}
