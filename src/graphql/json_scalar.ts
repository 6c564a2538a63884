// Custom scalars: JSON (for GeoJSON geometries, RFC 7946) and DateTime (RFC 3339 / ISO 8601 in UTC).
import { GraphQLError, GraphQLScalarType, Kind, valueFromASTUntyped } from "graphql";

/** Arbitrary JSON; output-only in this schema, used for GeoJSON geometry objects. */
export const JsonScalar = new GraphQLScalarType({
  name: "JSON",
  description: "Any JSON value (RFC 8259). Boundaries use it for GeoJSON geometry objects (RFC 7946).",
  specifiedByURL: "https://www.rfc-editor.org/rfc/rfc8259",
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});

function toDate(value: unknown): Date {
  const date = value instanceof Date ? value : typeof value === "string" ? new Date(value) : undefined;
  if (!date || Number.isNaN(date.getTime())) throw new GraphQLError("DateTime must be an RFC 3339 date-time");
  return date;
}

/** An instant as an RFC 3339 string in UTC, e.g. "2026-01-01T00:00:00.000Z". */
export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: "DateTime",
  description: "An instant in time as an RFC 3339 (ISO 8601) string in UTC, for example 2026-01-01T00:00:00.000Z.",
  specifiedByURL: "https://scalars.graphql.org/andimarek/date-time",
  serialize: (value) => toDate(value).toISOString(),
  parseValue: (value) => {
    if (typeof value !== "string") throw new GraphQLError("DateTime must be a string");
    return toDate(value);
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError("DateTime must be a string");
    return toDate(ast.value);
  },
});
