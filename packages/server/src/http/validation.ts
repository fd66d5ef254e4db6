import { Ajv, type Options } from "ajv";
import addFormats from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";

const shared: Options = {
  allErrors: false,
  // Unknown fields must be refused (400), never silently dropped.
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  // Errors carry their schema, so a failed pattern can be explained by the field's description.
  verbose: true,
};

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ ...shared, ...options });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

/**
 * Query strings and path parameters arrive as text, so they are coerced ("5" → 5, "a" → ["a"]);
 * JSON bodies are not: `"percentageActors": "50"` is a wrong type and gets a 400.
 */
export function buildValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv({ coerceTypes: false });
  const coercing = makeAjv({ coerceTypes: "array" });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === "body" ? strict : coercing;
    return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}
