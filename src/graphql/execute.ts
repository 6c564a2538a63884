// Parse + validate + limits with a bounded LRU of prepared documents, then execution with masked errors.
import {
  execute,
  GraphQLError,
  parse,
  validate,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from "graphql";
import type { GraphqlLimits } from "../config.ts";
import type { GraphqlContext } from "./context.ts";
import { formatError, requestError } from "./errors.ts";
import { checkLimits } from "./limits.ts";
import { clarifyValidationError, VALIDATION_RULES } from "./validation_rules.ts";

/** A query text after parse, validation and limit checks; `errors` set when it must not run. */
export interface Prepared {
  /** Present whenever parsing succeeded, so the operation type can be checked even for invalid documents. */
  document?: DocumentNode;
  errors?: readonly GraphQLFormattedError[];
}

/** A formatted execution result; `data` absent means the request failed before execution (a request error). */
export interface RunResult {
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
}

export interface RunInput {
  document: DocumentNode;
  operationName: string | undefined;
  variables: Record<string, unknown> | undefined;
  context: GraphqlContext;
  /** Called for each unexpected resolver failure before it is masked. */
  report: (error: GraphQLError) => void;
}

export interface Executor {
  prepare(query: string): Prepared;
  run(input: RunInput): Promise<RunResult>;
  /** Entries currently cached; for tests and metrics. */
  cacheSize(): number;
}

function parseOrError(query: string, maxTokens: number): DocumentNode | GraphQLFormattedError {
  try {
    return parse(query, { maxTokens });
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    // graphql-js reports the token cap as a syntax error; give it its own code so clients can tell.
    const tooLong = error.message.includes("tokens. Parsing aborted");
    if (tooLong) return requestError("TOKEN_LIMIT_EXCEEDED", `Query has more than ${maxTokens} tokens`);
    return { ...error.toJSON(), extensions: { code: "GRAPHQL_PARSE_FAILED" } };
  }
}

function prepareUncached(schema: GraphQLSchema, limits: GraphqlLimits, query: string): Prepared {
  const parsed = parseOrError(query, limits.maxTokens);
  if (!("kind" in parsed)) return { errors: [parsed] };
  const invalid = validate(schema, parsed, VALIDATION_RULES, { maxErrors: 20 });
  if (invalid.length > 0) {
    return {
      document: parsed,
      errors: invalid.map((error) => ({
        ...clarifyValidationError(error).toJSON(),
        extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
      })),
    };
  }
  const broken = checkLimits(schema, parsed, limits);
  return broken ? { document: parsed, errors: [broken] } : { document: parsed };
}

/** Builds an executor over an immutable schema; its cache lives as long as the app that created it. */
export function createExecutor(schema: GraphQLSchema, limits: GraphqlLimits, maxEntries = 500): Executor {
  const cache = new Map<string, Prepared>();
  return {
    prepare(query) {
      const hit = cache.get(query);
      if (hit) {
        // Map keeps insertion order: re-inserting marks the entry most recently used.
        cache.delete(query);
        cache.set(query, hit);
        return hit;
      }
      const prepared = prepareUncached(schema, limits, query);
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
      cache.set(query, prepared);
      return prepared;
    },
    async run({ document, operationName, variables, context, report }) {
      const result = await execute({ schema, document, operationName, variableValues: variables, contextValue: context });
      const formatted: RunResult = {};
      if (result.errors) formatted.errors = result.errors.map((error) => formatError(error, report));
      if ("data" in result) formatted.data = result.data as Record<string, unknown> | null;
      return formatted;
    },
    cacheSize: () => cache.size,
  };
}
