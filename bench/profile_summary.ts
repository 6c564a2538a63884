// Prints the top self-time and inclusive-time functions of a .cpuprofile: `node bench/profile_summary.ts FILE [N]`.
import { readFileSync } from "node:fs";

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const [file, top = "30"] = process.argv.slice(2);
if (!file) throw new TypeError("usage: node bench/profile_summary.ts FILE [N]");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

const label = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/work\/main\//, "")}:${f.lineNumber + 1}`;
const selfBy = new Map<string, number>();
const inclusiveBy = new Map<string, number>();
for (const [id, us] of self) {
  selfBy.set(label(byId.get(id)!.callFrame), (selfBy.get(label(byId.get(id)!.callFrame)) ?? 0) + us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const key = label(byId.get(cur)!.callFrame);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusiveBy.set(key, (inclusiveBy.get(key) ?? 0) + us);
  }
}
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms sampled)`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) {
    console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  }
};
print("self time", selfBy);
print("inclusive time", inclusiveBy);
