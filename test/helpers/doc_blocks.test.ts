// The parts of docs_examples.test.ts that decide what runs and what counts as matching the docs.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "./bounded.ts";
import { fieldgateInvocations, nodeFiles, npmScripts, printingCapture, shapeMismatch, shellBlocks, steps } from "./doc_blocks.ts";

test("shellBlocks finds sh, bash and shell blocks, marks `no-run` ones, and skips other languages", () => {
  const text = [
    "```sh", "echo a", "```",
    "```bash no-run", "npm start", "```",
    "~~~shell", "echo ```", "~~~",
    "```ts", "const a = 1;", "```",
    "````", "```sh", "not a block", "````",
    "```` ```sh no-run ````, inline code, not a fence",
    "```sh", "echo b", "```",
  ].join("\n");
  assert.deepEqual(shellBlocks("x.md", text), [
    { file: "x.md", line: 1, body: "echo a", run: true },
    { file: "x.md", line: 4, body: "npm start", run: false },
    { file: "x.md", line: 7, body: "echo ```", run: true },
    { file: "x.md", line: 18, body: "echo b", run: true },
  ]);
});

test("steps end at each documented output line", () => {
  assert.deepEqual(steps("A=$(x)\n# {\"a\":1}\n\ncurl y\n# [1]\necho z"), [
    { script: "A=$(x)", documented: "{\"a\":1}" },
    { script: "\ncurl y", documented: "[1]" },
    { script: "echo z" },
  ]);
});

const documented = { access_token: "fgat_…", expires_in: 1800, created_at: 1, data: { n: 8 }, list: [1] };
const shapes = [
  { name: "a token of the documented prefix and another time match", actual: { ...documented, access_token: "fgat_x", created_at: 2 }, mismatch: false },
  { name: "another token prefix does not", actual: { ...documented, access_token: "fgrt_x" }, mismatch: true },
  { name: "another number does not", actual: { ...documented, expires_in: 1801 }, mismatch: true },
  { name: "a nested value does not", actual: { ...documented, data: { n: 9 } }, mismatch: true },
  { name: "an extra key does not", actual: { ...documented, refresh_token: "fgrt_x" }, mismatch: true },
  { name: "a missing key does not", actual: { access_token: "fgat_x" }, mismatch: true },
  { name: "another array length does not", actual: { ...documented, list: [1, 2] }, mismatch: true },
  { name: "a time that is not a number does not", actual: { ...documented, created_at: "1" }, mismatch: true },
];
for (const row of shapes) {
  test(`shapeMismatch: ${row.name}`, () => {
    assert.equal(shapeMismatch(documented, row.actual) !== undefined, row.mismatch);
  });
}

test("npmScripts and fieldgateInvocations read what a command line runs", () => {
  assert.deepEqual(npmScripts("npm install && npm start; npm run --silent fieldgate -- x; npm run bench:peers"), [
    "fieldgate", "bench:peers", "start",
  ]);
  assert.deepEqual(
    fieldgateInvocations("printf x | npm run --silent fieldgate -- users add --username a@b --org acme > out"),
    [{ words: ["users", "add"], flags: ["--username", "--org"] }],
  );
  assert.deepEqual(fieldgateInvocations("npx deno task cli backup /b/x-$(date +%F).db --json"), [
    { words: ["backup"], flags: ["--json"] },
  ]);
  assert.deepEqual(fieldgateInvocations("npm run --silent fieldgate -- <command> [options]"), [{ words: [], flags: [] }]);
  assert.deepEqual(nodeFiles("node bench/inproc.ts token 100 && node --input-type=module -e 'x' && node --test a/b.test.ts"), [
    "bench/inproc.ts", "a/b.test.ts",
  ]);
});

test("printingCapture prints what a filtered capture keeps, and sets the variable as before", () => {
  const script = printingCapture("T=$(printf '%s' '{\"a\":\"x\"}' \\\n  | sed -E 's/.*\"a\":\"([^\"]+)\".*/\\1/')");
  assert.equal(execFileSync("sh", ["-e", "-c", `${script}\nprintf ' %s' "$T"`], { encoding: "utf8" }), '{"a":"x"} x');
  assert.equal(printingCapture("curl x"), "curl x");
});
