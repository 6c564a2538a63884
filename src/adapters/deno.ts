// Deno entry point: `deno task cli <command>` (deno.json names the permissions it needs); the same CLI as on Node.
import { runCli } from "../cli/main.ts";
import { createDenoDeps, Deno, denoIo } from "./serve_deno.ts";

let code: number;
try {
  code = await runCli(Deno.args, denoIo(), createDenoDeps(Deno.env.toObject()));
} catch (error) {
  console.error(error instanceof Error ? `fieldgate: ${error.message}` : error);
  code = 1;
}
// Exit explicitly: after a shutdown that outlived its grace, a stuck client's connection would keep the process up.
Deno.exit(code);
