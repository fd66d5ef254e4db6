import { type TSchema, Type } from "typebox";

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
