// Static limits on a validated document: depth, estimated cost, one __schema (document_shape.ts counts before validation).
import {
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import type { GraphqlLimits } from "../config.ts";
import { requestError } from "./errors.ts";
import type { GraphQLFormattedError } from "graphql";

/** Assumed length of a list whose size no argument bounds (organizations, introspection lists). */
const DEFAULT_LIST_SIZE = 10;
/** Page size assumed for a connection when `first` is omitted (the schema's default). */
const DEFAULT_PAGE_SIZE = 50;
/**
 * Flat prices of the introspection entry points, whatever they select below: `__schema` can return the whole schema
 * (~30 KB fully expanded), `__type` one type. Priced high so they cannot ride along with other expensive selections.
 */
const INTROSPECTION_COST = new Map([["__schema", 500], ["__type", 50]]);
/**
 * Leaves priced above 1, by "Type.field". A Field's boundary is its GeoJSON polygon spliced raw into the response:
 * ~130 bytes for a square, 38 KB for a surveyed field of 1 000 vertices, where every other leaf is a number or a short
 * string. Priced 1, `fields(first: 100) { nodes { organization { fields(first: 46) { nodes { boundary } } } } }` passed
 * with 4 600 boundaries (~175 MB); at 20 a query gets at most ~250 (5 000 / 20), and a page of 100 fields with every
 * attribute still costs ~3 600 of the default 5 000.
 */
const LEAF_COST = new Map([["Field.boundary", 20]]);
/** How many `__schema` selections one operation may make: one answers every question a client can ask. */
const MAX_SCHEMA_SELECTIONS = 1;

interface Walk {
  schema: GraphQLSchema;
  limits: GraphqlLimits;
  fragments: Map<string, FragmentDefinitionNode>;
  // Memo per fragment so a document that spreads fragments exponentially still costs linear time to measure.
  depthMemo: Map<string, number>;
  costMemo: Map<string, number>;
  schemaMemo: Map<string, number>;
}

/** Page size a `first` argument implies: a literal (capped), the max for a variable, the default when absent. */
function pageSizeOf(field: FieldNode, limits: GraphqlLimits): number | undefined {
  const first = field.arguments?.find((arg) => arg.name.value === "first");
  if (!first) return field.name.value === "fields" ? DEFAULT_PAGE_SIZE : undefined;
  if (first.value.kind === Kind.INT) return Math.min(Math.max(Number(first.value.value), 0), limits.maxPageSize);
  return limits.maxPageSize;
}

function childFieldType(parent: GraphQLNamedType | undefined, name: string) {
  if (!parent || !(isObjectType(parent) || isInterfaceType(parent))) return undefined;
  return parent.getFields()[name]?.type;
}

function depthOf(walk: Walk, set: SelectionSetNode): number {
  let max = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      // ofType chains follow a type's wrappers, which the schema bounds; counting them would refuse standard
      // introspection queries for no safety gain.
      const own = selection.name.value === "ofType" ? 0 : 1;
      max = Math.max(max, own + (selection.selectionSet ? depthOf(walk, selection.selectionSet) : 0));
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      max = Math.max(max, depthOf(walk, selection.selectionSet));
    } else {
      const name = selection.name.value;
      max = Math.max(max, viaFragment(walk, { memo: walk.depthMemo, key: name, name, measure: (f) => depthOf(walk, f.selectionSet) }));
    }
  }
  return max;
}

/**
 * A measurement of the named fragment, computed once per memo key; an unknown fragment measures 0 (validation
 * reports it). Memoizing keeps exponential fragment fan-out linear to measure.
 */
function viaFragment(
  walk: Walk,
  options: { memo: Map<string, number>; key: string; name: string; measure: (fragment: FragmentDefinitionNode) => number },
): number {
  const { memo, key, name, measure } = options;
  let value = memo.get(key);
  if (value === undefined) {
    const fragment = walk.fragments.get(name);
    value = fragment ? measure(fragment) : 0;
    memo.set(key, value);
  }
  return value;
}

/** Cost of one selection set per parent object: every field 1 (LEAF_COST aside), lists multiply what is below them. */
function costOf(walk: Walk, set: SelectionSetNode, parent: GraphQLNamedType | undefined, pending?: number): number {
  let total = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      total += fieldCost(walk, selection, parent, pending);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? walk.schema.getType(selection.typeCondition.name.value) : parent;
      total += costOf(walk, selection.selectionSet, type ?? parent, pending);
    } else {
      const key = `${selection.name.value}|${pending ?? ""}`;
      total += viaFragment(walk, {
        memo: walk.costMemo,
        key,
        name: selection.name.value,
        measure: (f) => costOf(walk, f.selectionSet, walk.schema.getType(f.typeCondition.name.value) ?? parent, pending),
      });
    }
  }
  return total;
}

function fieldCost(walk: Walk, field: FieldNode, parent: GraphQLNamedType | undefined, pending?: number): number {
  // Introspection entry points have a fixed price: their size is bounded by the (small) schema, and graphql-js's
  // own MaxIntrospectionDepthRule (in the standard rules) already refuses recursive __Type nesting.
  const introspection = INTROSPECTION_COST.get(field.name.value);
  if (introspection !== undefined) return introspection;
  if (!field.selectionSet || field.name.value.startsWith("__")) {
    return LEAF_COST.get(`${parent?.name}.${field.name.value}`) ?? 1;
  }
  const type = childFieldType(parent, field.name.value);
  const nullable = type && getNullableType(type);
  const size = pageSizeOf(field, walk.limits);
  const multiplier = nullable && isListType(nullable) ? (pending ?? DEFAULT_LIST_SIZE) : 1;
  // A connection's page size applies to the lists directly below it (nodes, edges), not to the connection.
  const below = size ?? (nullable && isListType(nullable) ? undefined : pending);
  return 1 + multiplier * costOf(walk, field.selectionSet, type && getNamedType(type), size ?? below);
}

/**
 * How many times a selection set selects `__schema`, through aliases and fragments (a fragment counts each time it
 * is spread). Memoized per fragment; validation has already refused fragment cycles.
 */
function schemaSelections(walk: Walk, set: SelectionSetNode): number {
  let count = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === "__schema") count++;
      else if (selection.selectionSet) count += schemaSelections(walk, selection.selectionSet);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      count += schemaSelections(walk, selection.selectionSet);
    } else {
      const name = selection.name.value;
      count += viaFragment(walk, { memo: walk.schemaMemo, key: name, name, measure: (f) => schemaSelections(walk, f.selectionSet) });
    }
  }
  return count;
}

/** Measures a validated document; returns the first limit it breaks as a GraphQL error, or undefined. */
export function checkLimits(schema: GraphQLSchema, document: DocumentNode, limits: GraphqlLimits): GraphQLFormattedError | undefined {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const walk: Walk = { schema, limits, fragments, depthMemo: new Map(), costMemo: new Map(), schemaMemo: new Map() };
  for (const def of document.definitions) {
    if (def.kind !== Kind.OPERATION_DEFINITION) continue;
    const depth = depthOf(walk, def.selectionSet);
    if (depth > limits.maxDepth) {
      return requestError("DEPTH_LIMIT_EXCEEDED", `Query depth ${depth} exceeds the limit of ${limits.maxDepth}`);
    }
    // Checked before the cost so a client repeating __schema learns why rather than only a total.
    const schemaCount = schemaSelections(walk, def.selectionSet);
    if (schemaCount > MAX_SCHEMA_SELECTIONS) {
      return requestError(
        "COST_LIMIT_EXCEEDED",
        `Query selects __schema ${schemaCount} times; it may be selected once per operation`,
      );
    }
    const root = schema.getRootType(def.operation) ?? undefined;
    const cost = costOf(walk, def.selectionSet, root);
    if (cost > limits.maxCost) {
      return requestError("COST_LIMIT_EXCEEDED", `Query cost ${cost} exceeds the limit of ${limits.maxCost}`);
    }
  }
  return undefined;
}
