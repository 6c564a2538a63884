// Node entry point: `node src/adapters/node.ts <command>`; argv and env go to the CLI, which also runs `serve`.
import { runCli } from "../cli/main.ts";
import { createNodeDeps, nodeIo } from "./serve_node.ts";

try {
  process.exitCode = await runCli(process.argv.slice(2), nodeIo(), createNodeDeps(process.env));
} catch (error) {
  // Not a usage error: something the operator must see in full (a port in use, an unreadable database).
  console.error(error instanceof Error ? `fieldgate: ${error.message}` : error);
  process.exitCode = 1;
}
