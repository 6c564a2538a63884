import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { getIntrospectionQuery, parse } from "graphql";
import { checkShape, MAX_COMPARISONS, MAX_FRAGMENTS, MAX_SELECTIONS } from "../../src/graphql/document_shape.ts";
import { MAX_NESTING } from "../../src/graphql/document_text.ts";

/** Aliases allowed in these checks: high, so the rows below meet the other limits first. */
const ALIASES = 1_000;

const times = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join(" ");

/** A chain of `n` + 1 fragments on Query, each spreading the next one inside `wrap` levels of `viewer { }`. */
function fragmentChain(n: number, wrap = 0): string {
  const open = "viewer { ".repeat(wrap);
  const close = " }".repeat(wrap);
  return [
    "{ ...F0 }",
    ...Array.from({ length: n }, (_, i) => `fragment F${i} on Query { ${open}...F${i + 1}${close} }`),
    `fragment F${n} on Query { __typename }`,
  ].join("\n");
}

/** `n` fragments that each select `id` and `__typename` on Field, spread side by side as UI components do. */
function componentFragments(n: number, field: string): string {
  return `{ fields { nodes { id ${times(n, (i) => `...C${i}`)} } } }
${times(n, (i) => `fragment C${i} on Field { ${field} }`)}`;
}

const rows = [
  { name: `${MAX_SELECTIONS + 1} distinct field selections`, query: `{ ${times(MAX_SELECTIONS + 1, (i) => `f${i}`)} }`, code: "SELECTION_LIMIT_EXCEEDED" },
  { name: "284 copies of organizations { fields { total_count } }", query: `{ ${times(284, () => "organizations { fields { total_count } }")} }`, code: "SELECTION_LIMIT_EXCEEDED" },
  { name: "46 copies of organizations { id }", query: `{ ${times(46, () => "organizations { id }")} }`, code: "OVERLAP_LIMIT_EXCEEDED" },
  { name: "27 copies of a three-level path, compared across parents", query: `{ ${times(27, () => "viewer { organizations { id } }")} }`, code: "OVERLAP_LIMIT_EXCEEDED" },
  { name: "60 fragments that each select __typename, spread at one level", query: componentFragments(60, "__typename"), code: "OVERLAP_LIMIT_EXCEEDED" },
  { name: "60 copies through inline fragments", query: `{ ${times(60, () => "... on Query { __typename }")} }`, code: "OVERLAP_LIMIT_EXCEEDED" },
  { name: "50 distinct fragments spread side by side", query: `{ ${times(50, (i) => `...F${i}`)} } ${times(50, (i) => `fragment F${i} on Query { x${i} }`)}`, code: "OVERLAP_LIMIT_EXCEEDED" },
  { name: "50 fragments reached through each other's top level", query: `{ ...F0 } ${times(50, (i) => `fragment F${i} on Query { x${i} ...F${i + 1} }`)} fragment F50 on Query { y }`, code: "OVERLAP_LIMIT_EXCEEDED" },
  { name: "300 operations that share a fragment of 100 fields", query: `${times(300, (i) => `query Q${i} { ...A }`)} fragment A on Query { ${times(100, (i) => `x${i}`)} }`, code: "SELECTION_LIMIT_EXCEEDED" },
  { name: `${MAX_FRAGMENTS + 1} fragment definitions`, query: fragmentChain(MAX_FRAGMENTS), code: "SELECTION_LIMIT_EXCEEDED" },
  { name: "a chain of 90 fragments nesting three levels each", query: fragmentChain(89, 2), code: "NESTING_LIMIT_EXCEEDED" },
  { name: "a chain of 60 fragments that each select a field", query: fragmentChain(59).replaceAll(" ...F", " x ...F"), code: "OVERLAP_LIMIT_EXCEEDED" },
];

for (const row of rows) {
  test(`checkShape refuses ${row.name} with ${row.code}`, () => {
    assert.equal(checkShape(parse(row.query, { noLocation: true }), ALIASES)?.extensions?.code, row.code);
  });
}

const passing = [
  { name: "the standard introspection query", query: getIntrospectionQuery({ descriptions: true, specifiedByUrl: true }) },
  { name: `${MAX_SELECTIONS} distinct field selections`, query: `{ ${times(MAX_SELECTIONS, (i) => `f${i}`)} }` },
  { name: "25 copies of a three-level path", query: `{ ${times(25, () => "viewer { organizations { id } }")} }` },
  { name: "20 fragments that each select id and __typename beside id", query: componentFragments(20, "id __typename") },
  { name: "40 distinct fragments spread side by side", query: `{ ${times(40, (i) => `...F${i}`)} } ${times(40, (i) => `fragment F${i} on Query { x${i} }`)}` },
  { name: "the same 10 fragments spread side by side in 40 places", query: `{ ${times(40, (i) => `a${i}: viewer { ${times(10, (j) => `...V${j}`)} }`)} } ${times(10, (j) => `fragment V${j} on Viewer { v${j} }`)}` },
  { name: "one fragment spread 200 times in one selection set", query: `{ ${times(200, () => "...F")} } fragment F on Query { __typename }` },
  { name: `a chain of ${MAX_FRAGMENTS} fragment spreads`, query: fragmentChain(MAX_FRAGMENTS - 1) },
  { name: "a chain of 80 fragments nesting three levels each", query: fragmentChain(79, 2) },
  { name: "4 operations that share a fragment of 100 fields", query: `${times(4, (i) => `query Q${i} { ...A }`)} fragment A on Query { ${times(100, (i) => `x${i}`)} }` },
  { name: "a fragment cycle (validation refuses it)", query: "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }" },
  { name: "a fragment spreading itself", query: "{ ...A } fragment A on Query { __typename ...A }" },
  { name: "a spread of an unknown fragment", query: "{ ...Nope }" },
];

for (const row of passing) {
  test(`checkShape lets ${row.name} through to validation`, () => {
    assert.equal(checkShape(parse(row.query, { noLocation: true }), ALIASES), undefined);
  });
}

test("checkShape counts aliases against the configured limit before validation", () => {
  const query = `{ ${times(31, (i) => `a${i}: __typename`)} }`;
  assert.equal(checkShape(parse(query), 30)?.extensions?.code, "ALIAS_LIMIT_EXCEEDED");
  assert.equal(checkShape(parse(query), 31), undefined);
});

test("checkShape's pair cap counts the pairs a quadratic comparison would make", () => {
  // 45 copies: 990 pairs of `organizations` and 990 of `organizations.id`, 1 980 in all.
  const error = checkShape(parse(`{ ${times(45, () => "organizations { id }")} }`), ALIASES);
  assert.match(error?.message ?? "", /needs 1980 comparisons/);
  assert.ok(1_980 > MAX_COMPARISONS);
});
