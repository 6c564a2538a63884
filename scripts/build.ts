// `npm run build` (and `prepack`): dist/ from src/, ES modules with .d.ts declarations and source maps, emptied first
// so a module deleted from src/ cannot linger in the package.
import { rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
process.exitCode = result.status ?? 1;
