// Keeps imports running one way: every relative import in src/ points to a lower layer or stays in its own module
// group. The layers are data below; docs/architecture.md states the same order.
import { test } from "./helpers/bounded.ts";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { stripComments, walk } from "./helpers/source_files.ts";
import { dirname, join, normalize, relative } from "node:path";

const SRC = new URL("../src/", import.meta.url).pathname;

/**
 * Top to bottom. A group is a directory under src/ or a file directly in it (`app.ts` and `app/` are one group).
 * A file may import its own group and any group of a lower layer; groups of one layer are peers and import nothing
 * of each other. oauth/ is the protocol core that graphql/ (a protected resource) and ui/ (the pages of the
 * authorization flow) build on, and demo/ registers its users and clients through it; config.ts and deps.ts are the types every layer passes around.
 */
const LAYERS: { name: string; groups: readonly string[] }[] = [
  { name: "entry points", groups: ["adapters", "mod"] },
  { name: "cli", groups: ["cli"] },
  { name: "app", groups: ["app"] },
  { name: "surfaces", groups: ["graphql", "ui", "server"] },
  { name: "demo", groups: ["demo"] },
  { name: "oauth", groups: ["oauth"] },
  { name: "transport, storage, crypto, geometry", groups: ["http", "store", "crypto", "geo"] },
  { name: "dependency types", groups: ["deps"] },
  { name: "configuration", groups: ["config"] },
];

/** Imports against the order, each with its reason. */
const EXCEPTIONS: { from: string; to: string; reason: string }[] = [
  { from: "deps.ts", to: "store/contract.ts", reason: "Deps carries the Store interface; a type, and store/ imports nothing back" },
];


// `import … from "x"`, `export … from "x"`, `import "x"` and `import("x")`; only relative specifiers stay in src/.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

/** The src-relative paths `rel`'s source imports. */
function importsOf(rel: string, source: string): string[] {
  return [...stripComments(source).matchAll(IMPORT)].map((m) => normalize(join(dirname(rel), m[1]!)));
}

function groupOf(rel: string): string {
  return rel.split("/")[0]!.replace(/\.ts$/, "");
}

function layerOf(rel: string): number {
  const index = LAYERS.findIndex((layer) => layer.groups.includes(groupOf(rel)));
  if (index < 0) throw new Error(`src/${rel} is in no layer: add its group to LAYERS`);
  return index;
}

/** Why `from` may not import `to`, or undefined when it may. */
function violation(from: string, to: string): string | undefined {
  if (groupOf(from) === groupOf(to)) return undefined;
  const [a, b] = [layerOf(from), layerOf(to)];
  if (a < b) return undefined;
  return a === b ? `peers in "${LAYERS[a]!.name}"` : `"${LAYERS[a]!.name}" imports "${LAYERS[b]!.name}" above it`;
}

function isExcepted(from: string, to: string): boolean {
  return EXCEPTIONS.some((e) => from === e.from && (to === e.to || (e.to.endsWith("/") && to.startsWith(e.to))));
}

function allImports(): { from: string; to: string }[] {
  return walk(SRC).flatMap((file) => {
    const from = relative(SRC, file);
    return importsOf(from, readFileSync(file, "utf8")).map((to) => ({ from, to }));
  });
}

test("every import in src/ runs down the layer order or stays in its group", () => {
  const offenders = allImports()
    .filter(({ from, to }) => !isExcepted(from, to))
    .flatMap(({ from, to }) => {
      const why = violation(from, to);
      return why ? [`${from} -> ${to}: ${why}`] : [];
    });
  assert.deepEqual(offenders, []);
});

test("every exception is still needed, so removing an import also removes its exception", () => {
  const imports = allImports();
  const unused = EXCEPTIONS.filter((e) => !imports.some(({ from, to }) => isExcepted(from, to) && from === e.from && violation(from, to)));
  assert.deepEqual(unused.map((e) => `${e.from} -> ${e.to}`), []);
});

/**
 * Inside store/: the contract (contract.ts) and the neutral modules beside it (row mappers, rules both backends
 * share) import no backend, and a backend folder imports only itself, the contract and the neutral modules, never
 * the other backend (STYLE §15). Adding a backend adds its folder here; a new shared module is added to NEUTRAL.
 */
const BACKENDS = ["store/sqlite/", "store/postgres/"] as const;
const NEUTRAL = [
  "store/contract.ts",
  "store/rows.ts",
  "store/throttle_rules.ts",
  "store/errors.ts",
  "store/imports.ts",
  "store/import_decisions.ts",
] as const;

const backendOf = (rel: string) => BACKENDS.find((dir) => rel.startsWith(dir));
const isNeutral = (rel: string) => (NEUTRAL as readonly string[]).includes(rel);

/** Why `from` may not import `to` under the store's layout, or undefined when it may. */
function storeViolation(from: string, to: string): string | undefined {
  if (!from.startsWith("store/") || !to.startsWith("store/") || isNeutral(to)) return undefined;
  const own = backendOf(from);
  if (own !== undefined && to.startsWith(own)) return undefined;
  return own === undefined
    ? "the contract and neutral modules import no backend"
    : `${own} imports what is neither its own nor the contract or a neutral module`;
}

test("every module in store/ is the contract, a neutral module or part of one backend folder", () => {
  const stray = walk(join(SRC, "store")).map((file) => relative(SRC, file)).filter((rel) => !isNeutral(rel) && !backendOf(rel));
  assert.deepEqual(stray, []);
});

test("the store's contract and neutral modules import no backend, and neither backend imports the other", () => {
  const offenders = allImports().flatMap(({ from, to }) => {
    const why = storeViolation(from, to);
    return why ? [`${from} -> ${to}: ${why}`] : [];
  });
  assert.deepEqual(offenders, []);
});

test("the contract declares and implements nothing: only types, importing only types", () => {
  const code = stripComments(readFileSync(join(SRC, "store/contract.ts"), "utf8"));
  assert.deepEqual(code.match(/^export\s+(?!interface\b|type\b).*$/gm) ?? [], []);
  assert.deepEqual(code.match(/^import\s+(?!type\b).*$/gm) ?? [], []);
});

const STORE_CASES: { name: string; from: string; to: string; allowed: boolean }[] = [
  { name: "postgres imports sqlite", from: "store/postgres/users.ts", to: "store/sqlite/database.ts", allowed: false },
  { name: "sqlite imports postgres", from: "store/sqlite/users.ts", to: "store/postgres/connect.ts", allowed: false },
  { name: "the contract imports sqlite", from: "store/contract.ts", to: "store/sqlite/store.ts", allowed: false },
  { name: "a neutral module imports postgres", from: "store/rows.ts", to: "store/postgres/connect.ts", allowed: false },
  { name: "sqlite imports the contract", from: "store/sqlite/users.ts", to: "store/contract.ts", allowed: true },
  { name: "postgres imports a neutral module", from: "store/postgres/users.ts", to: "store/rows.ts", allowed: true },
  { name: "a backend imports itself", from: "store/sqlite/store.ts", to: "store/sqlite/users.ts", allowed: true },
  { name: "a layer above opens a backend", from: "cli/database.ts", to: "store/sqlite/store.ts", allowed: true },
  { name: "postgres imports a SQLite file at the top of store/", from: "store/postgres/audit.ts", to: "store/sqlite.ts", allowed: false },
];
for (const c of STORE_CASES) {
  test(`the store layout rule: ${c.name} is ${c.allowed ? "allowed" : "refused"}`, () => {
    assert.equal(storeViolation(c.from, c.to) === undefined, c.allowed);
  });
}

test("the scanner finds static, re-exported, side-effect and dynamic imports, and ignores comments", () => {
  const source = [
    'import type { A } from "../deps.ts";',
    'export { b } from "./b.ts";',
    'import "../http/c.ts";',
    'const d = await import("../store/d.ts");',
    'import {\n  e,\n} from "../crypto/e.ts";',
    '// import { f } from "../ui/f.ts";',
    'import { g } from "node:fs";',
  ].join("\n");
  assert.deepEqual(importsOf("oauth/x.ts", source), ["deps.ts", "oauth/b.ts", "http/c.ts", "store/d.ts", "crypto/e.ts"]);
  assert.match(violation("http/body.ts", "oauth/errors.ts") ?? "", /above it/);
  assert.match(violation("graphql/endpoint.ts", "ui/page.ts") ?? "", /peers/);
  assert.equal(violation("oauth/token.ts", "http/body.ts"), undefined);
});
