#!/usr/bin/env node
// The package's `fieldgate` command (dist/adapters/node_bin.js): refuses a Node too old to run fieldgate, naming the
// version needed and the executable that needs none, before loading anything that would fail there (node:sqlite).
import process from "node:process";

/**
 * The Node releases package.json's `engines` names, each tested from the packed package (test/package.test.ts):
 * 22.23 and 24.21 on. Earlier 22 releases lack node:sqlite features the store uses (22.13: setReturnArrays; 22.16
 * fails a query), so the floor is the release that passes, not the first without the flag.
 */
function supported(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return (major === 22 && minor >= 23) || (major === 24 && minor >= 21) || major > 24;
}

if (supported(process.versions.node)) {
  // `npx fieldgate` alone, or `npx fieldgate start`, is the evaluator's one command: `serve`, as `npm start` is.
  const command = process.argv[2];
  if (command === undefined || command === "start") process.argv.splice(2, command === undefined ? 0 : 1, "serve");
  await import("./node.ts");
} else {
  process.stderr.write(
    `fieldgate needs Node 22.23 or newer on the 22 line, or Node 24.21 or newer (this is ${process.version}).\n` +
      "Without Node: the single executable from the release (fieldgate-<version>-linux-x64, beside SHA256SUMS) " +
      "needs nothing installed; see the README's Install section.\n",
  );
  process.exitCode = 1;
}
