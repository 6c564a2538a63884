// Micro-benchmark behind the digest decision: crypto.subtle.digest (portable) vs node:crypto createHash per call.
import { createHash } from "node:crypto";
import { sha256Hex } from "../src/crypto/hash.ts";

const N = Number(process.argv[2] ?? 50_000);
const input = "fgat_" + "x".repeat(43);
const nodeDigest = async (value: string) => createHash("sha256").update(value).digest("hex");

async function time(name: string, fn: (v: string) => Promise<string>): Promise<number> {
  for (let i = 0; i < 2_000; i++) await fn(input + i);
  const start = performance.now();
  for (let i = 0; i < N; i++) await fn(input + i);
  const us = ((performance.now() - start) * 1000) / N;
  console.log(`${name.padEnd(32)} ${us.toFixed(2)} µs per call`);
  return us;
}

const subtle = await time("crypto.subtle.digest", sha256Hex);
const sync = await time("node:crypto createHash (async fn)", nodeDigest);
console.log(`difference: ${(subtle - sync).toFixed(2)} µs per digest`);
