import { Type } from "typebox";
import { ATTRIBUTE_NAME_MAX_LENGTH, CONDITION_VALUE_MAX_LENGTH, MAX_CACHE_SECONDS } from "@flagstaff/core";
import { errorResponses, Limits, MAX_ACTORS } from "../../http/schemas.js";
import type { TypedApp } from "../../http/typed-app.js";
import { requestEnvironment } from "../../http/environment.js";
import type { AnswerCheck } from "./answer-check.js";

/** How many attributes a check's query may name, and how many values one may repeat. */
export const MAX_ATTRIBUTES = 50;
export const MAX_ATTRIBUTE_VALUES = 100;

export const CheckQuery = Type.Object(
  {
    actorIds: Type.Optional(
      Type.Array(Limits.actorId, {
        maxItems: MAX_ACTORS,
        description: `Actors to check for, repeated (actorIds=a&actorIds=b) or bracketed (actorIds[]=a); at most ${MAX_ACTORS}`,
      }),
    ),
    environment: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "The environment to check in; default the key's (a key bound to an environment may name only its own). Extension.",
      }),
    ),
    cache: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MAX_CACHE_SECONDS,
        description: "Seconds for Cache-Control: private, max-age=N",
      }),
    ),
    attributes: Type.Optional(
      Type.Record(
        Type.String({ maxLength: ATTRIBUTE_NAME_MAX_LENGTH }),
        Type.Union([
          Type.String({ maxLength: CONDITION_VALUE_MAX_LENGTH }),
          Type.Array(Type.String({ maxLength: CONDITION_VALUE_MAX_LENGTH }), { maxItems: MAX_ATTRIBUTE_VALUES }),
        ]),
        {
          maxProperties: MAX_ATTRIBUTES,
          // A record's key schema is not enforced on its own (it becomes patternProperties "^.*$").
          propertyNames: { minLength: 1, maxLength: ATTRIBUTE_NAME_MAX_LENGTH },
          description: `Context attributes for rules: attributes[NAME]=value, a name repeated for a list; at most ${MAX_ATTRIBUTES} names and ${MAX_ATTRIBUTE_VALUES} values each. Extension.`,
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const CheckResult = Type.Object(
  {
    enabled: Type.Boolean({ description: "Whether the flag serves anything but its offVariant" }),
    variant: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: "Flags that are not boolean: the variant served. Extension.",
      }),
    ),
    value: Type.Optional(Type.Unknown({ description: "Flags that are not boolean: the variant's value. Extension." })),
  },
  { $id: "CheckResult" },
);

/** The check's route; the node:http adapter (http/node-adapter.ts) answers it too and records metrics under it. */
export const CHECK_ROUTE = "/projects/:projectId/flags/:flagName/check";

export function checkRoutes(app: TypedApp, answerCheck: AnswerCheck): void {
  app.addSchema(CheckResult);
  app.get(
    CHECK_ROUTE,
    {
      config: { access: "check", requestLogging: false },
      schema: {
        tags: ["evaluation"],
        summary: "Check whether a flag is enabled, optionally for given actors",
        description:
          "Answered from memory. disabled → false; enabled → true; conditional → true when an actor is attached, " +
          "is in an attached segment, falls in the actor rollout (crc32(flagName:actorId) % 100000 < " +
          "percentageActors × 1000), or the call falls in the call rollout. Extension: the flag's rules read " +
          "attributes[NAME]=value; a flag that is not boolean also answers its variant and value.",
        params: Type.Object({ projectId: Type.String(), flagName: Type.String() }),
        querystring: CheckQuery,
        response: { 200: Type.Ref("CheckResult"), ...errorResponses(400, 401, 403, 404, 429, 500) },
      },
    },
    (request, reply) => {
      const { projectId, flagName } = request.params;
      const { actorIds, cache, attributes } = request.query;
      const answer = answerCheck(projectId, requestEnvironment(request), flagName, actorIds, cache, attributes);
      // The body is written out already: Fastify sends a string with a JSON type as it is.
      reply.header("cache-control", answer.cacheControl).header("content-type", JSON_TYPE);
      return reply.send(answer.body);
    },
  );
}

export const JSON_TYPE = "application/json; charset=utf-8";
