// Deno entry point: `deno run --allow-all src/adapters/deno.ts <command>`; the same CLI as on Node.
import { runCli } from "../cli/main.ts";
import { createDenoDeps, Deno, denoIo } from "./serve_deno.ts";

try {
  Deno.exitCode = await runCli(Deno.args, denoIo(), createDenoDeps(Deno.env.toObject()));
} catch (error) {
  console.error(error instanceof Error ? `fieldgate: ${error.message}` : error);
  Deno.exitCode = 1;
}
