// What the query selected below the field being resolved: a connection reads boundaries only when they are asked for.
import { type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from "graphql";

/**
 * The fields directly in `set`, through inline fragments and fragment spreads (validation has ruled out cycles).
 * Directives are not evaluated: a field under `@skip` counts as selected, which only ever reads more than needed.
 */
function fieldsIn(set: SelectionSetNode | undefined, fragments: Record<string, FragmentDefinitionNode>): FieldNode[] {
  const fields: FieldNode[] = [];
  for (const selection of set?.selections ?? []) {
    if (selection.kind === Kind.FIELD) fields.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) fields.push(...fieldsIn(selection.selectionSet, fragments));
    else fields.push(...fieldsIn(fragments[selection.name.value]?.selectionSet, fragments));
  }
  return fields;
}

/** True when, below the field being resolved, the query selects the chain of field names `path` (aliases aside). */
export function selects(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  let level: readonly FieldNode[] = info.fieldNodes;
  for (const name of path) {
    level = level.flatMap((node) => fieldsIn(node.selectionSet, info.fragments)).filter((field) => field.name.value === name);
    if (level.length === 0) return false;
  }
  return true;
}

// The answer depends only on the document's syntax nodes, which the document cache keeps across requests: kept per
// node, a total_count request repeated with one query text costs one lookup instead of a walk (2 % of its CPU).
const connectionAnswers = new WeakMap<FieldNode, boolean>();

/** A FieldConnection's selection asks for boundaries, through `nodes` or `edges { node }`. */
export function connectionSelectsBoundary(info: GraphQLResolveInfo): boolean {
  const single = info.fieldNodes.length === 1 ? info.fieldNodes[0]! : undefined;
  const kept = single && connectionAnswers.get(single);
  if (kept !== undefined) return kept;
  const answer = selects(info, ["nodes", "boundary"]) || selects(info, ["edges", "node", "boundary"]);
  if (single) connectionAnswers.set(single, answer);
  return answer;
}
