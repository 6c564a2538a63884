// What the query selected below the field being resolved: a connection reads boundaries only when they are asked for.
import {
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
  if (!selection.directives?.length) return true;
  const variables = info.variableValues;
  if (getDirectiveValues(GraphQLSkipDirective, selection, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, selection, variables)?.if !== false;
}

/**
 * True when `set` selects a field named `path[at]` that this request executes, through inline fragments and fragment
 * spreads (validation has ruled out cycles) and with @skip and @include applied as graphql-js applies them, and that
 * field in turn selects the rest of the path. A boundary read for a skipped selection would spend the response's
 * boundary budget on text nobody is sent. A depth-first search that builds no lists: it runs on every request.
 */
function reaches(set: SelectionSetNode | undefined, path: readonly string[], at: number, info: GraphQLResolveInfo): boolean {
  for (const selection of set?.selections ?? []) {
    if (!included(selection, info)) continue;
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value !== path[at]) continue;
      if (at + 1 === path.length || reaches(selection.selectionSet, path, at + 1, info)) return true;
    } else {
      const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : info.fragments[selection.name.value]?.selectionSet;
      if (reaches(inner, path, at, info)) return true;
    }
  }
  return false;
}

/** True when, below the field being resolved, the query selects the chain of field names `path` (aliases aside). */
export function selects(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  if (path.length === 0) return true;
  return info.fieldNodes.some((node) => reaches(node.selectionSet, path, 0, info));
}

/** A FieldConnection's selection asks for boundaries, through `nodes` or `edges { node }`. */
export function connectionSelectsBoundary(info: GraphQLResolveInfo): boolean {
  return selects(info, ["nodes", "boundary"]) || selects(info, ["edges", "node", "boundary"]);
}
