// How the check's and explain's query strings carry context attributes: the grammar's one home. The
// server's query parser, the check's fast path and the SDK's remote check and explain all read it here.
//
//   attributes[NAME]=value        the attribute NAME is the text `value`
//   attributes[NAME]=a&attributes[NAME]=b
//                                 a name repeated is a list of the values, in order
//   attributes[NAME][]=value      every value of this spelling is an element of the list NAME, so
//                                 `attributes[tags][]=beta` alone is the list ["beta"]
//
// A name written both ways in one query (`attributes[x]=a&attributes[x][]=b`) is refused (400): it says
// both "a value" and "a list" of one attribute. An empty list cannot be written: a list of no elements has
// no parameter to carry it, so it reads as a missing attribute (a rule that tells the two apart, such as a
// negated condition or `present`, answers as for a missing attribute). The brackets may be percent-encoded
// (`attributes%5BNAME%5D%5B%5D`), as URLSearchParams writes them. Limits: MAX_QUERY_ATTRIBUTES names,
// MAX_QUERY_ATTRIBUTE_VALUES values per name, each name ATTRIBUTE_NAME_MAX_LENGTH and each value
// CONDITION_VALUE_MAX_LENGTH characters at most.

/** The parameter of an attribute, once percent-decoded: `attributes[NAME]`, or `attributes[NAME][]` for a list's element. */
export const QUERY_ATTRIBUTE_PARAMETER = /^attributes\[([^\]]+)\](\[\])?$/;

/** An attribute parameter as read: the attribute's name, and whether its values are a list's elements. */
export interface QueryAttributeParameter {
  readonly name: string;
  readonly list: boolean;
}

/** Reads a percent-decoded query parameter's name as an attribute's (`attributes[NAME]` or `attributes[NAME][]`), or undefined. */
export function readQueryAttributeParameter(parameter: string): QueryAttributeParameter | undefined {
  const match = QUERY_ATTRIBUTE_PARAMETER.exec(parameter);
  if (match === null) return undefined;
  return { name: match[1] as string, list: match[2] !== undefined };
}

/**
 * The query parameter (not yet percent-encoded) that carries an attribute's values: `attributes[NAME]` for
 * a single value, `attributes[NAME][]` for each element of a list, whatever its length.
 */
export const queryAttributeParameter = (name: string, list: boolean): string =>
  list ? `attributes[${name}][]` : `attributes[${name}]`;
