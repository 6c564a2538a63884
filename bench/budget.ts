// `node bench/budget.ts`: how much work per request each target ratio leaves on this machine today. It measures the
// ceiling, then the same bare node:http server reading and parsing scenario 2's JSON body and spinning for a fixed
// number of µs per request, under the benchmark's load, and interpolates the work at which 0.40 and 0.25 are reached.
// A ratio target is then a budget: what the application may spend beyond node:http, a body and a JSON.parse.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runLoad, type LoadOptions } from "./load.ts";
import { startServer } from "./spawn.ts";
import { COUNT_QUERY } from "./scenarios.ts";
import { ratio } from "./stats.ts";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    work: { type: "string", default: "0,10,15,20,30,40" },
  },
});
const load: LoadOptions = { connections: 10, warmupSeconds: 1, durationSeconds: Number(values.duration) };
const works = values.work.split(",").map(Number);
const TARGETS = [0.4, 0.25];

/** The work (µs) at which the ratio falls to `target`, by linear interpolation between measured points. */
export function workAtRatio(points: readonly { workUs: number; ratio: number }[], target: number): number | undefined {
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    if (a.ratio >= target && b.ratio <= target) {
      return a.ratio === b.ratio ? a.workUs : a.workUs + ((a.ratio - target) * (b.workUs - a.workUs)) / (a.ratio - b.ratio);
    }
  }
  return undefined;
}

async function measure(args: string[], method: "GET" | "POST", work: string) {
  const server = await startServer({ args: [new URL("./ceiling.ts", import.meta.url).pathname, "--port", "{port}", ...args], readyPath: "/", logFile: join(work, "budget.log") });
  try {
    return await runLoad({
      origin: server.origin,
      method,
      path: "/graphql",
      headers: method === "POST" ? { "content-type": "application/json" } : undefined,
      body: method === "POST" ? JSON.stringify({ query: COUNT_QUERY }) : undefined,
    }, { ...load, serverCpuSeconds: server.cpuSeconds });
  } finally {
    await server.stop();
  }
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), "fieldgate-budget-"));
  try {
    const ceiling = await measure([], "GET", work);
    console.log(`ceiling (GET, fixed JSON)        ${String(ceiling.requestsPerSecond).padStart(6)} req/s  ${ceiling.serverCpuUsPerRequest.toFixed(1).padStart(6)} µs CPU/req`);
    const points = [];
    for (const workUs of works) {
      const result = await measure(["--work-us", String(workUs)], "POST", work);
      const r = ratio(result.requestsPerSecond, ceiling.requestsPerSecond);
      points.push({ workUs, ratio: r });
      console.log(`POST + JSON.parse + ${String(workUs).padStart(3)} µs work  ${String(result.requestsPerSecond).padStart(6)} req/s  ${result.serverCpuUsPerRequest.toFixed(1).padStart(6)} µs CPU/req  ratio ${r.toFixed(2)}`);
    }
    for (const target of TARGETS) {
      const budget = workAtRatio(points, target);
      console.log(`ratio ${target}: ${budget === undefined ? "outside the measured range" : `about ${budget.toFixed(0)} µs of work per request`}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
