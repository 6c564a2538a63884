#!/usr/bin/env node
// The package's `fieldgate` command (dist/adapters/node_bin.js): refuses a Node too old to run fieldgate, naming the
// version needed and the executable that needs none, before loading anything that would fail there (node:sqlite).
import process from "node:process";

/** The Node releases package.json's `engines` names: 22 from 22.13 (node:sqlite without a flag), and 24 on. */
function supported(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return (major === 22 && minor >= 13) || major >= 24;
}

if (supported(process.versions.node)) {
  await import("./node.ts");
} else {
  process.stderr.write(
    `fieldgate needs Node 22.13 or newer on the 22 line, or Node 24 or newer (this is ${process.version}).\n` +
      "Without Node: the single executable from the release (fieldgate-<version>-linux-x64, beside SHA256SUMS) " +
      "needs nothing installed; see the README's Install section.\n",
  );
  process.exitCode = 1;
}
