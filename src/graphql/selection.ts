// What the query selected below the field being resolved: a connection reads boundaries only when they are asked for.
import {
  type FieldNode,
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  type GraphQLResolveInfo,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
} from "graphql";

/** False when @skip or @include (GraphQL spec §3.13) leave the selection out for this request's variables. */
function included(selection: SelectionNode, info: GraphQLResolveInfo): boolean {
  if ((selection.directives ?? []).length === 0) return true;
  const variables = info.variableValues;
  if (getDirectiveValues(GraphQLSkipDirective, selection, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, selection, variables)?.if !== false;
}

/**
 * The fields directly in `set` that this request executes, through inline fragments and fragment spreads
 * (validation has ruled out cycles), with @skip and @include applied as graphql-js applies them. A boundary read
 * for a skipped selection would spend the response's boundary budget on text nobody is sent.
 */
function fieldsIn(set: SelectionSetNode | undefined, info: GraphQLResolveInfo): FieldNode[] {
  const fields: FieldNode[] = [];
  for (const selection of set?.selections ?? []) {
    if (!included(selection, info)) continue;
    if (selection.kind === Kind.FIELD) fields.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) fields.push(...fieldsIn(selection.selectionSet, info));
    else fields.push(...fieldsIn(info.fragments[selection.name.value]?.selectionSet, info));
  }
  return fields;
}

/** True when, below the field being resolved, the query selects the chain of field names `path` (aliases aside). */
export function selects(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  let level: readonly FieldNode[] = info.fieldNodes;
  for (const name of path) {
    level = level.flatMap((node) => fieldsIn(node.selectionSet, info)).filter((field) => field.name.value === name);
    if (level.length === 0) return false;
  }
  return true;
}

/** A FieldConnection's selection asks for boundaries, through `nodes` or `edges { node }`. */
export function connectionSelectsBoundary(info: GraphQLResolveInfo): boolean {
  return selects(info, ["nodes", "boundary"]) || selects(info, ["edges", "node", "boundary"]);
}
