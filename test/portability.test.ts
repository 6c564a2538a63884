// Keeps the core runtime-agnostic: outside the adapters and the SQLite module, src/ may use Web APIs only.
import { test } from "./helpers/bounded.ts";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { stripComments, walk } from "./helpers/source_files.ts";
import { join, relative } from "node:path";

const SRC = new URL("../src/", import.meta.url).pathname;

// Files allowed to touch the runtime: the adapters (one per runtime), the SQLite backend (node:sqlite) and the
// PostgreSQL connection.
const ALLOWED = [/^adapters\//, /^store\/sqlite\//, /^store\/postgres\/connect\.ts$/];

const FORBIDDEN: { name: string; pattern: RegExp }[] = [
  { name: "node: import", pattern: /from\s+["']node:|import\(\s*["']node:/ },
  { name: "process global", pattern: /\bprocess\s*\.\s*\w/ },
  { name: "Deno global", pattern: /\bDeno\s*\.\s*\w/ },
  { name: "Buffer", pattern: /\bBuffer\s*\.\s*\w|\bnew\s+Buffer\b/ },
  { name: "require", pattern: /\brequire\s*\(/ },
  { name: "__dirname/__filename", pattern: /\b__(dirname|filename)\b/ },
];


test("src outside adapters, store/sqlite/ and store/postgres/connect.ts uses only Web APIs", () => {
  const offenders: string[] = [];
  for (const file of walk(SRC)) {
    const rel = relative(SRC, file);
    if (ALLOWED.some((allowed) => allowed.test(rel))) continue;
    const code = stripComments(readFileSync(file, "utf8"));
    for (const { name, pattern } of FORBIDDEN) {
      if (pattern.test(code)) offenders.push(`${rel}: ${name}`);
    }
  }
  assert.deepEqual(offenders, []);
});

test("the scanner itself catches a forbidden import", () => {
  const sample = stripComments('import { x } from "node:fs";\nconst y = process.env.X;');
  assert.ok(FORBIDDEN.some(({ pattern }) => pattern.test(sample)));
});

// A Fetch subclass is a runtime's performance device (STYLE §12): its adapter makes it and reads it; the core and
// every other caller of app.fetch see the platform's own classes.
const FETCH_SUBCLASS = /\bextends\s+(?:globalThis\s*\.\s*)?(?:Response|Headers|Request)\b/;

test("only src/adapters/ subclasses Response, Headers or Request", () => {
  const offenders = walk(SRC)
    .map((file) => relative(SRC, file))
    .filter((rel) => !rel.startsWith("adapters/") && FETCH_SUBCLASS.test(stripComments(readFileSync(join(SRC, rel), "utf8"))));
  assert.deepEqual(offenders, []);
});

test("the Fetch subclass scanner catches each class and ignores comments and other names", () => {
  for (const sample of ["class A extends Response {", "class B extends Headers{", "class C extends globalThis.Request {"]) {
    assert.ok(FETCH_SUBCLASS.test(stripComments(sample)), sample);
  }
  for (const sample of ["// class A extends Response {", "class D extends ResponseLike {", "class E extends Error {"]) {
    assert.ok(!FETCH_SUBCLASS.test(stripComments(sample)), sample);
  }
});

test("only store/sqlite/ imports node:sqlite", () => {
  const importers = walk(SRC)
    .filter((file) => /["']node:sqlite["']/.test(readFileSync(file, "utf8")))
    .map((file) => relative(SRC, file));
  assert.ok(importers.length > 0);
  assert.deepEqual(importers.filter((rel) => !rel.startsWith("store/sqlite/")), []);
});

test("only store/postgres/connect.ts loads postgres.js, and only on first use (a dynamic import)", () => {
  const importers = walk(SRC)
    .filter((file) => /from\s+["']postgres["']|import\(\s*["']postgres["']\s*\)/.test(stripComments(readFileSync(file, "utf8"))))
    .map((file) => relative(SRC, file));
  assert.deepEqual(importers, ["store/postgres/connect.ts"]);
  const code = stripComments(readFileSync(join(SRC, "store/postgres/connect.ts"), "utf8"));
  assert.deepEqual(code.match(/^import .*["']postgres["'];$/gm), ['import type { Sql, TransactionSql } from "postgres";']);
});

// A static `import … from`, `export … from` or `import "…"` (over several lines too), not a type-only one: each loads
// the module it names when the importing module loads.
const STATIC_IMPORT = /^(?:import|export)\s+(?!type\b)(?:[^;"']*?\bfrom\s*)?["']([^"']+)["']/gm;

/** The specifiers `source` loads statically. */
function staticImports(source: string): string[] {
  return [...stripComments(source).matchAll(STATIC_IMPORT)].map((m) => m[1]!);
}

test("outside store/postgres/, the PostgreSQL modules are imported dynamically, so a SQLite run never loads them", () => {
  const offenders = walk(SRC)
    .filter((file) => !relative(SRC, file).startsWith("store/postgres/"))
    .filter((file) => staticImports(readFileSync(file, "utf8")).some((specifier) => /(^|\/)postgres\//.test(specifier)))
    .map((file) => relative(SRC, file));
  assert.deepEqual(offenders, []);
});

test("the static-import scanner sees imports and re-exports, and not type-only or dynamic ones", () => {
  const source = [
    'import { a } from "./store/postgres/a.ts";',
    'export { b, type B } from "./store/postgres/b.ts";',
    'export {\n  c,\n} from "./store/postgres/c.ts";',
    'import "./store/postgres/d.ts";',
    'export * from "./store/postgres/e.ts";',
    'import type { F } from "./store/postgres/f.ts";',
    'export type { G } from "./store/postgres/g.ts";',
    'const h = await import("./store/postgres/h.ts");',
    'export const i = "./store/postgres/i.ts";',
    '// export { j } from "./store/postgres/j.ts";',
  ].join("\n");
  assert.deepEqual(staticImports(source), ["a", "b", "c", "d", "e"].map((x) => `./store/postgres/${x}.ts`));
});
