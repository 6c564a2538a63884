// The GraphQL error shape: { message, locations?, path?, extensions: { code } }, with unexpected failures masked.
import { GraphQLError, type GraphQLFormattedError } from "graphql";

/** Machine-readable codes in `extensions.code`; clients branch on these, never on messages. */
export type GraphqlErrorCode =
  | "BAD_REQUEST"
  | "GRAPHQL_PARSE_FAILED"
  | "GRAPHQL_VALIDATION_FAILED"
  | "BAD_USER_INPUT"
  | "OPERATION_NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "DEPTH_LIMIT_EXCEEDED"
  | "COST_LIMIT_EXCEEDED"
  | "ALIAS_LIMIT_EXCEEDED"
  | "TOKEN_LIMIT_EXCEEDED"
  | "NESTING_LIMIT_EXCEEDED"
  | "SELECTION_LIMIT_EXCEEDED"
  | "OVERLAP_LIMIT_EXCEEDED"
  | "BOUNDARY_LIMIT_EXCEEDED"
  | "INTERNAL_SERVER_ERROR";

/** A GraphQL error we raise on purpose; its message is safe to show the client. */
export function graphqlError(code: GraphqlErrorCode, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

/** A formatted error for a failure outside execution (bad request parameters, limits). */
export function requestError(code: GraphqlErrorCode, message: string): GraphQLFormattedError {
  return { message, extensions: { code } };
}

/**
 * True when the error was raised on purpose rather than by a bug: graphql-js and our resolvers raise
 * GraphQLErrors with client-safe messages; anything else (a plain Error from the store, a TypeError) is a bug.
 */
function isExpected(error: GraphQLError): boolean {
  return error.originalError === undefined || error.originalError instanceof GraphQLError;
}

/**
 * Formats an execution error for the response. Unexpected ones are logged through `report` and replaced by a
 * generic message so stack traces, SQL and internal messages never reach the client.
 */
export function formatError(error: GraphQLError, report: (error: GraphQLError) => void): GraphQLFormattedError {
  if (isExpected(error)) {
    // Without a path the error concerns the request's input (variables); with one, a value we failed to produce.
    const code = error.extensions.code ?? (error.path ? "INTERNAL_SERVER_ERROR" : "BAD_USER_INPUT");
    return { ...error.toJSON(), extensions: { ...error.extensions, code } };
  }
  report(error);
  const masked: GraphQLFormattedError = {
    message: "Internal server error",
    ...(error.locations && { locations: error.locations }),
    ...(error.path && { path: error.path }),
    extensions: { code: "INTERNAL_SERVER_ERROR" },
  };
  return masked;
}
