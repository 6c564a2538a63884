// Limits checked on the parsed document before graphql-js validates it: size, repeated response names, spread depth.
import { Kind, type DocumentNode, type GraphQLFormattedError, type SelectionSetNode } from "graphql";
import { MAX_NESTING } from "./document_text.ts";
import { requestError } from "./errors.ts";

/**
 * Field selections and fragment spreads in the document text, each counted once wherever it is spread. Validation
 * is linear in them; the standard introspection query has 76, a page with every Field attribute about 25.
 */
export const MAX_SELECTIONS = 500;
/**
 * Pairs of fields under one response path that share a response name, which graphql-js's OverlappingFieldsCanBeMerged
 * compares one by one (quadratic: 284 copies of one field are 40 186 pairs per level). A fragment's top-level fields
 * count where it is spread, so 20 spread fragments that each select `id` and `__typename` make 420.
 */
export const MAX_REPEATED_PAIRS = 1_000;

interface Spread {
  parent: number;
  depth: number;
  name: string;
}

interface FragmentInfo {
  root: number;
  nesting: number;
  spreads: Spread[];
}

/** Selection counts gathered in one iterative walk; response paths are numbered, their names counted per parent. */
interface Tally {
  selections: number;
  paths: Map<string, number>;
  names: Map<number, Map<string, number>>;
}

function pathOf(tally: Tally, parent: number, name: string): number {
  const key = `${parent} ${name}`;
  let id = tally.paths.get(key);
  if (id === undefined) tally.paths.set(key, (id = tally.paths.size + 1));
  return id;
}

function count(tally: Tally, parent: number, name: string, by: number): void {
  let names = tally.names.get(parent);
  if (!names) tally.names.set(parent, (names = new Map()));
  names.set(name, (names.get(name) ?? 0) + by);
}

/** Walks one definition's selections with an explicit stack; inline fragments merge into their parent's path. */
function walkDefinition(tally: Tally, set: SelectionSetNode, root: number): { nesting: number; spreads: Spread[] } {
  const spreads: Spread[] = [];
  let nesting = 0;
  const stack: { set: SelectionSetNode; parent: number; depth: number }[] = [{ set, parent: root, depth: 1 }];
  while (stack.length > 0) {
    const { set, parent, depth } = stack.pop()!;
    nesting = Math.max(nesting, depth);
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        tally.selections++;
        const name = selection.alias?.value ?? selection.name.value;
        count(tally, parent, name, 1);
        if (selection.selectionSet) stack.push({ set: selection.selectionSet, parent: pathOf(tally, parent, name), depth: depth + 1 });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        stack.push({ set: selection.selectionSet, parent, depth: depth + 1 });
      } else {
        tally.selections++;
        spreads.push({ parent, depth, name: selection.name.value });
      }
    }
  }
  return { nesting, spreads };
}

/**
 * Per fragment, in an order where every fragment comes after those it spreads: its deepest nesting through spreads
 * and the names at its top level including those of the fragments it spreads there. An edge that closes a cycle
 * counts nothing; validation refuses the cycle (NoFragmentCycles), and the selection cap bounds its recursion.
 */
function resolveFragments(tally: Tally, fragments: Map<string, FragmentInfo>): Map<string, number> {
  const deepest = new Map<string, number>();
  const state = new Map<string, "open" | "done">();
  for (const start of fragments.keys()) {
    if (state.has(start)) continue;
    const stack: { name: string; next: number }[] = [{ name: start, next: 0 }];
    state.set(start, "open");
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const info = fragments.get(top.name)!;
      const spread = info.spreads[top.next++];
      if (spread) {
        if (fragments.has(spread.name) && !state.has(spread.name)) {
          state.set(spread.name, "open");
          stack.push({ name: spread.name, next: 0 });
        }
        continue;
      }
      let nesting = info.nesting;
      const merged = new Set<string>();
      for (const s of info.spreads) {
        if (state.get(s.name) !== "done") continue;
        nesting = Math.max(nesting, s.depth + deepest.get(s.name)!);
        // graphql-js collects a fragment spread twice in one selection set once.
        if (s.parent !== info.root || merged.has(s.name)) continue;
        merged.add(s.name);
        mergeNames(tally, info.root, fragments.get(s.name)!.root);
      }
      deepest.set(top.name, nesting);
      state.set(top.name, "done");
      stack.pop();
    }
  }
  return deepest;
}

function mergeNames(tally: Tally, into: number, from: number): void {
  for (const [name, n] of tally.names.get(from) ?? []) count(tally, into, name, n);
}

function pairsOf(tally: Tally): number {
  let pairs = 0;
  for (const names of tally.names.values()) for (const n of names.values()) pairs += (n * (n - 1)) / 2;
  return pairs;
}

interface Definitions {
  operations: { nesting: number; spreads: Spread[] }[];
  fragments: Map<string, FragmentInfo>;
}

/** Walks every definition until the selections pass the cap; a repeated fragment name is one fragment here. */
function tallyDefinitions(tally: Tally, document: DocumentNode): Definitions {
  const operations: Definitions["operations"] = [];
  const fragments = new Map<string, FragmentInfo>();
  for (const definition of document.definitions) {
    if (tally.selections > MAX_SELECTIONS) break;
    if (definition.kind === Kind.OPERATION_DEFINITION) {
      operations.push(walkDefinition(tally, definition.selectionSet, pathOf(tally, 0, `#${operations.length}`)));
    } else if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      // Validation refuses the repeat; until then the spreads and names of both definitions add up.
      const name = definition.name.value;
      const root = pathOf(tally, 0, `...${name}`);
      const walked = walkDefinition(tally, definition.selectionSet, root);
      const known = fragments.get(name);
      if (known) {
        known.nesting = Math.max(known.nesting, walked.nesting);
        known.spreads.push(...walked.spreads);
      } else {
        fragments.set(name, { root, ...walked });
      }
    }
  }
  return { operations, fragments };
}

function deepestNesting({ operations }: Definitions, deepest: Map<string, number>): number {
  let nesting = Math.max(0, ...deepest.values());
  for (const operation of operations) {
    nesting = Math.max(nesting, operation.nesting);
    for (const s of operation.spreads) nesting = Math.max(nesting, s.depth + (deepest.get(s.name) ?? 0));
  }
  return nesting;
}

/** Adds each fragment's top-level names where it is spread below a definition's top, once per parent. */
function mergeSpreadNames(tally: Tally, { operations, fragments }: Definitions): void {
  const merged = new Set<string>();
  for (const info of [...operations, ...fragments.values()]) {
    for (const s of info.spreads) {
      const from = fragments.get(s.name);
      const key = `${s.parent} ${s.name}`;
      // A fragment's own top level was merged in resolveFragments.
      if (!from || merged.has(key) || ("root" in info && s.parent === info.root)) continue;
      merged.add(key);
      mergeNames(tally, s.parent, from.root);
    }
  }
}

/**
 * Checks the limits a document must meet before validation, in time linear in its selections and spreads.
 * @returns the first limit broken as a GraphQL error, or undefined
 */
export function checkShape(document: DocumentNode): GraphQLFormattedError | undefined {
  const tally: Tally = { selections: 0, paths: new Map(), names: new Map() };
  const definitions = tallyDefinitions(tally, document);
  if (tally.selections > MAX_SELECTIONS) {
    return requestError("SELECTION_LIMIT_EXCEEDED", `Query has more than ${MAX_SELECTIONS} field selections and fragment spreads`);
  }
  const nesting = deepestNesting(definitions, resolveFragments(tally, definitions.fragments));
  if (nesting > MAX_NESTING) {
    const message = `Query nests selections ${nesting} levels deep through fragments; at most ${MAX_NESTING} are allowed`;
    return requestError("NESTING_LIMIT_EXCEEDED", message);
  }
  mergeSpreadNames(tally, definitions);
  const pairs = pairsOf(tally);
  if (pairs > MAX_REPEATED_PAIRS) {
    return requestError(
      "REPEATED_FIELD_LIMIT_EXCEEDED",
      `Query repeats response names in ${pairs} pairs of fields; at most ${MAX_REPEATED_PAIRS} are allowed (select each field once)`,
    );
  }
  return undefined;
}
