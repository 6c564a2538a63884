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
