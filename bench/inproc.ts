// In-process cost of one request through app.fetch (no sockets): `node bench/inproc.ts [token|count|page] [N] [--subtle-digest] [--log]` (run with 2>/dev/null for --log).
// A quick, noise-resistant check of app-side changes; the real figures come from `npm run bench`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { jsonLog } from "../src/deps.ts";
import { deferredText, lightTextResponse } from "../src/adapters/light_response.ts";
import { ParsedRequest } from "../src/adapters/parsed_request.ts";
import { pooledRandom } from "../src/adapters/pooled_random.ts";
import { syncSha256Hex } from "../src/adapters/sync_digest.ts";
import { syncHmacSha256Base64Url } from "../src/adapters/sync_hmac.ts";
import { syncBlockCipher } from "../src/adapters/sync_block_cipher.ts";
import { openStore } from "../src/store/sqlite/store.ts";
import { seedDatabase } from "./seed.ts";
import { COUNT_QUERY, PAGE_QUERY } from "./scenarios.ts";

const [which = "token", n = "20000"] = process.argv.slice(2);
const nodeDigest = !process.argv.includes("--subtle-digest");
const withLog = process.argv.includes("--log");
const dir = mkdtempSync(join(tmpdir(), "fieldgate-inproc-"));
const seeded = await seedDatabase(join(dir, "db.sqlite"), { refreshPool: 0, fields: 500, fillerTokens: 0, fillerFields: 0, fillerOrganizations: 0 });
const store = openStore(seeded.path, { autoCheckpointPages: 0 });
const config = loadConfig({ FIELDGATE_DB: seeded.path });
// The collaborators the Node adapter injects (serve_node.ts createNodeDeps), so the figure is the server's.
const app = createApp({
  config, store, log: withLog ? jsonLog : () => {},
  digest: nodeDigest ? syncSha256Hex : undefined,
  random: pooledRandom(),
  hmac: syncHmacSha256Base64Url,
  blockCipher: syncBlockCipher,
  textResponse: lightTextResponse,
});
const tokenBody = JSON.stringify({ grant_type: "client_credentials", client_id: seeded.ccClient.clientId, client_secret: seeded.ccClient.clientSecret });
// Requests as the Node adapter builds them (ParsedRequest).
const encoder = new TextEncoder();
const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  new ParsedRequest("POST", "http://127.0.0.1" + path, Object.entries({
    "content-type": "application/json", "content-length": String(encoder.encode(body).byteLength), ...headers,
  }).flat(), encoder.encode(body)) as Request;
const first = await app.fetch(post("/oauth/token", tokenBody));
const accessToken = ((await first.json()) as { access_token: string }).access_token;
const make = which === "token"
  ? () => post("/oauth/token", tokenBody)
  : () => post("/graphql", JSON.stringify({ query: which === "page" ? PAGE_QUERY : COUNT_QUERY }), { authorization: `Bearer ${accessToken}` });
async function loop(count: number) {
  for (let i = 0; i < count; i++) {
    const response = await app.fetch(make());
    if (!response.ok) throw new Error(`status ${response.status}: ${await response.text()}`);
    // The Node adapter writes a light response's text itself (node_listener.ts responseParts).
    if (deferredText(response) === undefined) await response.arrayBuffer();
  }
}
await loop(2_000);
// Several rounds, reporting the fastest: other processes on the machine only ever make a round slower.
const rounds: { wall: number; cpu: number }[] = [];
for (let r = 0; r < 5; r++) {
  const count = Math.ceil(Number(n) / 5);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await loop(count);
  const cpu = process.cpuUsage(cpu0);
  rounds.push({ wall: ((performance.now() - t0) * 1000) / count, cpu: (cpu.user + cpu.system) / count });
}
const best = (key: "wall" | "cpu") => Math.min(...rounds.map((r) => r[key])).toFixed(1);
console.log(`${which}${nodeDigest ? "" : " (crypto.subtle digest)"}${withLog ? " (with request log)" : ""}: ` +
  `best of 5 rounds ${best("wall")} µs wall, ${best("cpu")} µs CPU per request`);
await store.close();
rmSync(dir, { recursive: true, force: true });
