// `npm run release [-- --out DIR]`: one folder per release with what each install path needs, the npm package
// tarball (`npm pack`, which builds dist/) and the single executable, plus SHA256SUMS in `sha256sum -c` format.
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildExecutable } from "./build_exe.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
const { values } = parseArgs({ options: { out: { type: "string", default: join("release", version) } } });
const out = resolve(values.out!);

// Emptied first: a checksum file must list exactly what the folder holds.
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const packed = spawnSync("npm", ["pack", "--pack-destination", out], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
if (packed.status !== 0) throw new Error(`npm pack exited with ${packed.status}`);
const executable = `fieldgate-${version}-${process.platform}-${process.arch}`;
copyFileSync((await buildExecutable()).path, join(out, executable));
chmodSync(join(out, executable), 0o755);

const files = readdirSync(out).sort();
const sums = files.map((name) => `${createHash("sha256").update(readFileSync(join(out, name))).digest("hex")}  ${name}\n`);
writeFileSync(join(out, "SHA256SUMS"), sums.join(""));
for (const name of [...files, "SHA256SUMS"]) {
  console.log(`${join(out, name)}  ${(statSync(join(out, name)).size / 2 ** 20).toFixed(1)} MiB`);
}
