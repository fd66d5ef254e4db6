import { CHECK_ROUTE, JSON_TYPE } from "../fast-routes.js";
import { Type } from "typebox";
import {
  ATTRIBUTE_NAME_MAX_LENGTH,
  CONDITION_VALUE_MAX_LENGTH,
  MAX_CACHE_SECONDS,
  MAX_QUERY_ATTRIBUTE_VALUES,
  MAX_QUERY_ATTRIBUTES,
} from "@flagstaff/core";
import { refuseMixedAttributes } from "../querystring.js";
import { errorResponses } from "../schemas.js";
import { Limits } from "@flagstaff/core/schemas";
import { MAX_ACTORS } from "@flagstaff/core";
import type { TypedApp } from "../typed-app.js";
import { requestEnvironment } from "../environment.js";
import type { AnswerCheck } from "../../features/evaluation/answer-check.js";

/**
 * An attribute's value in the query: a string, or a list of strings. Written as one `type` of both rather
 * than a union: the query's validator coerces (http/validation.ts), and in a union its first branch,
 * `string`, would turn a list of one (`attributes[x][]=a`) back into the string `a`.
 */
const QueryAttributeValue = Type.Unsafe<string | string[]>({
  type: ["string", "array"],
  maxLength: CONDITION_VALUE_MAX_LENGTH,
  items: { type: "string", maxLength: CONDITION_VALUE_MAX_LENGTH },
  maxItems: MAX_QUERY_ATTRIBUTE_VALUES,
});

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
      Type.Record(Type.String({ maxLength: ATTRIBUTE_NAME_MAX_LENGTH }), QueryAttributeValue, {
        maxProperties: MAX_QUERY_ATTRIBUTES,
        // A record's key schema is not enforced on its own (it becomes patternProperties "^.*$").
        propertyNames: { minLength: 1, maxLength: ATTRIBUTE_NAME_MAX_LENGTH },
        description:
          "Context attributes for rules. attributes[NAME]=value is a value, a name repeated a list " +
          "(attributes[tags]=a&attributes[tags]=b), and every attributes[NAME][]=value an element of the list " +
          "NAME, so attributes[tags][]=a alone is the list [a]. One name written both ways is a 400; an empty " +
          `list cannot be written (it reads as missing). At most ${MAX_QUERY_ATTRIBUTES} names and ` +
          `${MAX_QUERY_ATTRIBUTE_VALUES} values each, values of at most ${CONDITION_VALUE_MAX_LENGTH} characters. Extension.`,
      }),
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

export function checkRoutes(app: TypedApp, answerCheck: AnswerCheck): void {
  app.addSchema(CheckResult);
  app.get(
    CHECK_ROUTE,
    {
      config: { access: "check", requestLogging: false },
      preValidation: refuseMixedAttributes,
      schema: {
        tags: ["evaluation"],
        summary: "Check whether a flag is enabled, optionally for given actors",
        description:
          "Answered from memory. disabled → false; enabled → true; conditional → true when an actor is attached, " +
          "is in an attached segment, falls in the actor rollout (crc32(flagName:actorId) % 100000 < " +
          "percentageActors × 1000), or the call falls in the call rollout. Extension: the flag's rules read " +
          "attributes[NAME]=value (attributes[NAME][]=value for a list's elements); a flag that is not boolean " +
          "also answers its variant and value.",
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
