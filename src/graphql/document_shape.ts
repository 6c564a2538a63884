// Limits checked on the parsed document before graphql-js validates it: size, aliases, repetition, spread depth.
import { Kind, type DocumentNode, type GraphQLFormattedError, type SelectionSetNode } from "graphql";
import { MAX_NESTING } from "./document_text.ts";
import { requestError } from "./errors.ts";

/**
 * Field selections and fragment spreads, a fragment's counted once for each operation that uses it (graphql-js
 * walks every operation's fragments again for its variables). Validation is linear in them; the standard
 * introspection query has 76, a page with every Field attribute about 25.
 */
export const MAX_SELECTIONS = 500;
/**
 * Fragment definitions in one document. What fragments cost to validate grows with the square of their number (pairs
 * spread side by side, chains that spread one another); the standard introspection query defines 3.
 */
export const MAX_FRAGMENTS = 100;
/**
 * Comparisons graphql-js's OverlappingFieldsCanBeMerged makes one by one, quadratic in what repeats: pairs of fields
 * under one response path that share a response name (284 copies of one field are 40 186 pairs per level), plus
 * distinct pairs of fragments spread side by side. A fragment's top-level fields count where it is spread, so 20
 * component fragments that each select `id` and `__typename`, spread in one place, make 420 + 190.
 */
export const MAX_COMPARISONS = 1_000;

interface Spread {
  parent: number;
  depth: number;
  name: string;
}

interface Walked {
  nesting: number;
  spreads: Spread[];
  selections: number;
}

interface FragmentInfo extends Walked {
  root: number;
  /** This fragment and every fragment it spreads at any depth, transitively. */
  uses?: Set<string>;
  /** This fragment and every fragment it spreads at its top level, transitively: what graphql-js compares it with. */
  reach?: Set<string>;
}

/** Selection counts gathered in one iterative walk; response paths are numbered, their names counted per parent. */
interface Tally {
  selections: number;
  aliases: number;
  /** Response paths whose selection set has fields of its own, which graphql-js compares with each fragment spread there. */
  fielded: Set<number>;
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
function walkDefinition(tally: Tally, set: SelectionSetNode, root: number): Walked {
  const before = tally.selections;
  const spreads: Spread[] = [];
  let nesting = 0;
  const stack: { set: SelectionSetNode; parent: number; depth: number }[] = [{ set, parent: root, depth: 1 }];
  while (stack.length > 0) {
    const { set, parent, depth } = stack.pop()!;
    nesting = Math.max(nesting, depth);
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        tally.selections++;
        tally.fielded.add(parent);
        if (selection.alias) tally.aliases++;
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
  return { nesting, spreads, selections: tally.selections - before };
}

/**
 * Per fragment, in an order where every fragment comes after those it spreads: its deepest nesting through spreads,
 * the fragments it reaches (at its top level, and at any depth), and the names at its top level including those of
 * the fragments it spreads there. An edge that closes a cycle counts nothing: validation refuses the cycle
 * (NoFragmentCycles), whose recursion the fragment cap bounds.
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
      info.reach = new Set([top.name]);
      info.uses = new Set([top.name]);
      for (const s of info.spreads) {
        if (state.get(s.name) !== "done") continue;
        nesting = Math.max(nesting, s.depth + deepest.get(s.name)!);
        for (const name of fragments.get(s.name)!.uses!) info.uses.add(name);
        // graphql-js collects a fragment spread twice in one selection set once.
        if (s.parent !== info.root || info.reach.has(s.name)) continue;
        const spread = fragments.get(s.name)!;
        mergeNames(tally, info.root, spread.root);
        for (const name of spread.reach!) info.reach.add(name);
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

function fieldPairs(tally: Tally): number {
  let pairs = 0;
  for (const names of tally.names.values()) for (const n of names.values()) pairs += (n * (n - 1)) / 2;
  return pairs;
}

interface Definitions {
  operations: Walked[];
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
        known.selections += walked.selections;
      } else {
        fragments.set(name, { root, ...walked });
      }
    }
  }
  return { operations, fragments };
}

/** Selections each operation reaches, its fragments' included, summed; fragments no operation uses count once. */
function reachedSelections({ operations, fragments }: Definitions): number {
  let total = 0;
  const used = new Set<string>();
  for (const operation of operations) {
    const uses = new Set<string>();
    for (const s of operation.spreads) for (const name of fragments.get(s.name)?.uses ?? []) uses.add(name);
    total += operation.selections;
    for (const name of uses) total += fragments.get(name)!.selections;
    for (const name of uses) used.add(name);
  }
  for (const [name, info] of fragments) if (!used.has(name)) total += info.selections;
  return total;
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
 * Comparisons of fragments where they meet a selection set: graphql-js compares each fragment spread there, and what
 * it spreads at its top level, with the set's own fields (once per set), and every two fragments spread side by side
 * (once per pair for the whole document). Counting stops once there are more than `max`.
 */
function fragmentPairs(tally: Tally, { operations, fragments }: Definitions, max: number): number {
  const byParent = new Map<number, Set<string>>();
  for (const info of [...operations, ...fragments.values()]) {
    for (const s of info.spreads) {
      if (!fragments.get(s.name)?.reach) continue;
      let side = byParent.get(s.parent);
      if (!side) byParent.set(s.parent, (side = new Set()));
      side.add(s.name);
    }
  }
  let withFields = 0;
  const pairs = new Set<string>();
  for (const [parent, side] of byParent) {
    const reaches = [...side].map((name) => [...fragments.get(name)!.reach!]);
    if (tally.fielded.has(parent)) for (const reach of reaches) withFields += reach.length;
    for (let i = 0; i < reaches.length; i++) {
      for (let j = i + 1; j < reaches.length; j++) {
        for (const a of reaches[i]!) {
          for (const b of reaches[j]!) {
            if (a !== b) pairs.add(a < b ? `${a} ${b}` : `${b} ${a}`);
            if (withFields + pairs.size > max) return withFields + pairs.size;
          }
        }
      }
    }
    if (withFields + pairs.size > max) break;
  }
  return withFields + pairs.size;
}

/**
 * Checks the limits a document must meet before validation, in time linear in its selections and spreads.
 * @param maxAliases aliases allowed in the document (FIELDGATE_GRAPHQL_MAX_ALIASES)
 * @returns the first limit broken as a GraphQL error, or undefined
 */
export function checkShape(document: DocumentNode, maxAliases: number): GraphQLFormattedError | undefined {
  const tally: Tally = { selections: 0, aliases: 0, fielded: new Set(), paths: new Map(), names: new Map() };
  const definitions = tallyDefinitions(tally, document);
  if (tally.selections > MAX_SELECTIONS) {
    return requestError("SELECTION_LIMIT_EXCEEDED", `Query has more than ${MAX_SELECTIONS} field selections and fragment spreads`);
  }
  if (tally.aliases > maxAliases) {
    return requestError("ALIAS_LIMIT_EXCEEDED", `Query uses ${tally.aliases} aliases; at most ${maxAliases} are allowed`);
  }
  if (definitions.fragments.size > MAX_FRAGMENTS) {
    const message = `Query defines ${definitions.fragments.size} fragments; at most ${MAX_FRAGMENTS} are allowed`;
    return requestError("SELECTION_LIMIT_EXCEEDED", message);
  }
  const deepest = resolveFragments(tally, definitions.fragments);
  const reached = reachedSelections(definitions);
  if (reached > MAX_SELECTIONS) {
    const message = `Query reaches ${reached} field selections and fragment spreads, counting a fragment once for each` +
      ` operation that uses it; at most ${MAX_SELECTIONS} are allowed`;
    return requestError("SELECTION_LIMIT_EXCEEDED", message);
  }
  const nesting = deepestNesting(definitions, deepest);
  if (nesting > MAX_NESTING) {
    const message = `Query nests selections ${nesting} levels deep through fragments; at most ${MAX_NESTING} are allowed`;
    return requestError("NESTING_LIMIT_EXCEEDED", message);
  }
  mergeSpreadNames(tally, definitions);
  const fields = fieldPairs(tally);
  const pairs = fields + fragmentPairs(tally, definitions, Math.max(0, MAX_COMPARISONS - fields));
  if (pairs > MAX_COMPARISONS) {
    const message = `Query needs ${pairs} comparisons of fields that share a response name or fragments spread side by side` +
      ` to validate; at most ${MAX_COMPARISONS} are allowed (select each field once, spread fewer fragments in one place)`;
    return requestError("OVERLAP_LIMIT_EXCEEDED", message);
  }
  return undefined;
}
