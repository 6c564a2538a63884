// Parse + validate + limits with a bounded LRU of prepared documents, then execution with masked errors.
import {
  execute,
  GraphQLError,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationTypeNode,
} from "graphql";
import type { GraphqlLimits } from "../config.ts";
import type { GraphqlContext } from "./context.ts";
import { createTextCache, type CacheBounds } from "./document_cache.ts";
import { checkShape } from "./document_shape.ts";
import { MAX_NESTING, scanText } from "./document_text.ts";
import { formatError, requestError } from "./errors.ts";
import { checkLimits } from "./limits.ts";
import { clarifyValidationError, VALIDATION_RULES } from "./validation_rules.ts";

/** An operation of a document by name and type, without its selections. */
export interface OperationSummary {
  name: string | undefined;
  type: OperationTypeNode;
}

/**
 * A query text after parse, validation and limit checks: the document when it may run, otherwise its errors only.
 * A refused document keeps no AST (with its locations and token list it weighs up to ~240 bytes per character of
 * text), only what later requests with the same text need: the errors, and the operations so that GET can still
 * refuse a mutation with 405 (operationTypeOf).
 */
export type Prepared = (
  | { document: DocumentNode; operations: readonly OperationSummary[]; errors?: undefined }
  | { document?: undefined; operations: readonly OperationSummary[]; errors: readonly GraphQLFormattedError[] }
) & {
  /**
   * Set when the entry was prepared from another whitespace variant of this text: its locations point into that
   * text, so errors are answered without them.
   */
  otherText?: true;
};

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
  /** False when the document's locations belong to another whitespace variant of the request's text. */
  locations?: boolean;
}

export interface Executor {
  prepare(query: string): Prepared;
  run(input: RunInput): Promise<RunResult>;
  /** Entries currently cached; for tests and metrics. */
  cacheSize(): number;
  /** Characters of query text currently cached; for tests and metrics. */
  cacheChars(): number;
}

/**
 * Bounds of the document cache. 64 KiB of query text fills the 500 entries at ~130 characters each, or holds 32
 * queries the size of the standard introspection query (~2 KB); at the worst measured ~130 bytes kept per character
 * (a valid document of 990 fragment spreads) it is about 8.5 MB, small beside serve's 256 MB heap. A text over
 * 16 KiB, 8 times the standard introspection query, is prepared for its request and not kept, so no single query
 * takes more than a quarter of the cache.
 */
export const DOCUMENT_CACHE_BOUNDS: Readonly<CacheBounds> = Object.freeze({
  maxEntries: 500,
  maxChars: 65_536,
  maxEntryChars: 16_384,
});

/** The operation `operationName` selects, as graphql-js's getOperationAST picks it: by name, or the only one. */
export function operationTypeOf(prepared: Prepared, operationName: string | undefined): OperationTypeNode | undefined {
  if (operationName !== undefined) return prepared.operations.find((operation) => operation.name === operationName)?.type;
  return prepared.operations.length === 1 ? prepared.operations[0]!.type : undefined;
}

function operationsOf(document: DocumentNode): OperationSummary[] {
  return document.definitions.flatMap((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION ? [{ name: definition.name?.value, type: definition.operation }] : []
  );
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

function prepareUncached(internals: Internals, query: string, nesting: number): Prepared {
  const { schema, limits } = internals;
  // graphql-js parses by recursion: a text nested deeper than any query needs is refused before it can overflow.
  if (nesting > MAX_NESTING) {
    const error = requestError("NESTING_LIMIT_EXCEEDED", `Query nests brackets ${nesting} levels deep; at most ${MAX_NESTING} are allowed`);
    return { operations: [], errors: [error] };
  }
  const parsed = parseOrError(query, limits.maxTokens);
  if (!("kind" in parsed)) return { operations: [], errors: [parsed] };
  const operations = operationsOf(parsed);
  // Cheap counts first, so no graphql-js rule (OverlappingFieldsCanBeMerged is quadratic) sees an oversized document.
  const misshapen = checkShape(parsed, limits.maxAliases);
  if (misshapen) return { operations, errors: [misshapen] };
  const invalid = internals.validate(schema, parsed, VALIDATION_RULES, { maxErrors: 20 });
  if (invalid.length > 0) {
    return {
      operations,
      errors: invalid.map((error) => ({
        ...clarifyValidationError(error).toJSON(),
        extensions: { code: "GRAPHQL_VALIDATION_FAILED" },
      })),
    };
  }
  const broken = checkLimits(schema, parsed, limits);
  return broken ? { operations, errors: [broken] } : { document: parsed, operations };
}

/** What preparing a text needs from the executor that owns the cache. */
interface Internals {
  schema: GraphQLSchema;
  limits: GraphqlLimits;
  validate: typeof validate;
}

export interface ExecutorOptions {
  /** Bounds of the document cache, DOCUMENT_CACHE_BOUNDS by default (tests set small ones). */
  cache?: Readonly<CacheBounds>;
  /** graphql-js's validate unless a test counts the calls. */
  validate?: typeof validate;
}

function withoutLocations(errors: readonly GraphQLFormattedError[]): GraphQLFormattedError[] {
  return errors.map(({ locations: _, ...rest }) => rest);
}

/** The cached entry as this request's text may see it: its own locations only when it is the text that was parsed. */
function asSeenBy(entry: { text: string; prepared: Prepared }, query: string): Prepared {
  const { text, prepared } = entry;
  if (text === query) return prepared;
  return prepared.errors ? { ...prepared, errors: withoutLocations(prepared.errors), otherText: true } : { ...prepared, otherText: true };
}

/**
 * Builds an executor over an immutable schema; its cache lives as long as the app that created it. Entries are keyed
 * by the text with insignificant whitespace, commas and comments collapsed (document_text.ts), and refusals are kept
 * like successes, so resending a document that was expensive to refuse, respaced or not, costs one scan and a lookup.
 */
export function createExecutor(schema: GraphQLSchema, limits: GraphqlLimits, options: ExecutorOptions = {}): Executor {
  const documents = createTextCache<{ text: string; prepared: Prepared }>(options.cache ?? DOCUMENT_CACHE_BOUNDS);
  const internals: Internals = { schema, limits, validate: options.validate ?? validate };
  return {
    prepare(query) {
      const { key, nesting } = scanText(query);
      const hit = documents.get(key);
      if (hit) return asSeenBy(hit, query);
      const prepared = prepareUncached(internals, query, nesting);
      // Weighed by the text it was parsed from: a kept document holds that text and an AST that grows with it.
      documents.set(key, { text: query, prepared }, query.length);
      return prepared;
    },
    async run({ document, operationName, variables, context, report, locations = true }) {
      const result = await execute({ schema, document, operationName, variableValues: variables, contextValue: context });
      const formatted: RunResult = {};
      if (result.errors) {
        const errors = result.errors.map((error) => formatError(error, report));
        formatted.errors = locations ? errors : withoutLocations(errors);
      }
      if ("data" in result) formatted.data = result.data as Record<string, unknown> | null;
      return formatted;
    },
    cacheSize: () => documents.size(),
    cacheChars: () => documents.chars(),
  };
}
