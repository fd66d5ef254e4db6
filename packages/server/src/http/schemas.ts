import { type TSchema, Type } from "typebox";
import { PageOf } from "../kernel/schemas.js";

// The problem details every error answers with, and the error responses an operation declares in the
// OpenAPI document. The request and page shapes features share are in ../schemas.ts; the field rules and
// shapes clients share in @flagstaff/core (contract/ and schemas/).

export const Problem = Type.Object(
  {
    type: Type.String({ description: "URI naming the kind of problem: urn:flagstaff:problem:<code>" }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: "Machine-readable error code" }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description: "Present on validation errors: one entry per offending value",
      }),
    ),
  },
  { $id: "Problem", description: "RFC 9457 problem details" },
);

/** Error responses an operation may give, for the OpenAPI document: sent as application/problem+json. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, { description: string; content: { "application/problem+json": { schema: TSchema } } }> = {};
  for (const status of statuses) {
    out[status] = {
      description: "RFC 9457 problem details",
      content: { "application/problem+json": { schema: Type.Ref("Problem") } },
    };
  }
  return out;
}

/** What a read of one page may answer besides the page: bad query, key, right, unknown parent, limits, failure. */
const PAGE_ERRORS: readonly number[] = [400, 401, 403, 404, 429, 500, 503];

/**
 * A GET that answers one page of items, declared once: its access (read unless said), the page of the
 * item's schema, and the errors a page read answers. Each list route passes its path, words and shapes.
 */
export function pageRead<P extends TSchema, Q extends TSchema, I extends TSchema>(spec: {
  readonly tags: string[];
  readonly summary: string;
  readonly params: P;
  readonly querystring: Q;
  readonly item: I;
  readonly access?: "read" | "admin";
  readonly errors?: readonly number[];
}) {
  return {
    config: { access: spec.access ?? "read" },
    schema: {
      tags: spec.tags,
      summary: spec.summary,
      params: spec.params,
      querystring: spec.querystring,
      response: { 200: PageOf(spec.item), ...errorResponses(...(spec.errors ?? PAGE_ERRORS)) },
    },
  };
}
