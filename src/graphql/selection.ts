// What the query selected below the field being resolved: a connection reads boundaries only when they are asked for.
import {
  type DirectiveNode,
  type FieldNode,
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  type GraphQLResolveInfo,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
} from "graphql";

interface Walk {
  info: GraphQLResolveInfo;
  /** Set when an @skip or @include on the way took its condition from a variable: the answer is this request's. */
  variable: boolean;
}

/** False when @skip or @include (GraphQL spec §3.13) leave the selection out for this request's variables. */
function included(selection: SelectionNode, walk: Walk): boolean {
  const directives = selection.directives ?? [];
  if (directives.length === 0) return true;
  if (directives.some(usesVariable)) walk.variable = true;
  const variables = walk.info.variableValues;
  if (getDirectiveValues(GraphQLSkipDirective, selection, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, selection, variables)?.if !== false;
}

function usesVariable(directive: DirectiveNode): boolean {
  return (directive.arguments ?? []).some((argument) => argument.value.kind === Kind.VARIABLE);
}

/**
 * The fields directly in `set` that this request executes, through inline fragments and fragment spreads
 * (validation has ruled out cycles), with @skip and @include applied as graphql-js applies them. A boundary read
 * for a skipped selection would spend the response's boundary budget on text nobody is sent.
 */
function fieldsIn(set: SelectionSetNode | undefined, walk: Walk): FieldNode[] {
  const fields: FieldNode[] = [];
  for (const selection of set?.selections ?? []) {
    if (!included(selection, walk)) continue;
    if (selection.kind === Kind.FIELD) fields.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) fields.push(...fieldsIn(selection.selectionSet, walk));
    else fields.push(...fieldsIn(walk.info.fragments[selection.name.value]?.selectionSet, walk));
  }
  return fields;
}

function reaches(walk: Walk, path: readonly string[]): boolean {
  let level: readonly FieldNode[] = walk.info.fieldNodes;
  for (const name of path) {
    level = level.flatMap((node) => fieldsIn(node.selectionSet, walk)).filter((field) => field.name.value === name);
    if (level.length === 0) return false;
  }
  return true;
}

/** True when, below the field being resolved, the query selects the chain of field names `path` (aliases aside). */
export function selects(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  return reaches({ info, variable: false }, path);
}

// The answer depends on the document's syntax nodes, which the document cache keeps across requests, and on
// variables only through @skip/@include: kept per node when no variable decided it, a total_count request repeated
// with one query text costs one lookup instead of a walk (2 % of its CPU).
const connectionAnswers = new WeakMap<FieldNode, boolean>();

/** A FieldConnection's selection asks for boundaries, through `nodes` or `edges { node }`. */
export function connectionSelectsBoundary(info: GraphQLResolveInfo): boolean {
  const single = info.fieldNodes.length === 1 ? info.fieldNodes[0]! : undefined;
  const kept = single && connectionAnswers.get(single);
  if (kept !== undefined) return kept;
  const walk: Walk = { info, variable: false };
  const answer = reaches(walk, ["nodes", "boundary"]) || reaches(walk, ["edges", "node", "boundary"]);
  if (single && !walk.variable) connectionAnswers.set(single, answer);
  return answer;
}
