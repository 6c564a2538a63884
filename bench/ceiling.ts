// The ceiling: a bare node:http server answering one fixed JSON body; every scenario is reported as a ratio to it.
// With --work-us N it first reads and parses the JSON request body and then spins for N µs: bench/budget.ts uses
// that to find how much work per request a ratio to the ceiling leaves on this machine.
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    "work-us": { type: "string" },
  },
});

// About the size of a token response, so the comparison is not flattered by a tiny body.
const BODY = Buffer.from(JSON.stringify({
  access_token: "fgat_" + "A".repeat(43),
  token_type: "Bearer",
  expires_in: 1800,
  scope: "fields:read",
  created_at: 1_767_225_600,
}));
const HEADERS = { "content-type": "application/json; charset=utf-8", "content-length": BODY.byteLength };

const workMs = values["work-us"] === undefined ? undefined : Number(values["work-us"]) / 1000;
if (workMs !== undefined && !(workMs >= 0)) throw new RangeError("--work-us must be a number of microseconds >= 0");

const server = createServer((req, res) => {
  if (workMs === undefined) {
    res.writeHead(200, HEADERS);
    res.end(BODY);
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    if (text !== "") JSON.parse(text);
    const until = performance.now() + workMs;
    // Busy on purpose: the work stands for a handler's CPU time, which a timer would not spend.
    while (performance.now() < until);
    res.writeHead(200, HEADERS);
    res.end(BODY);
  });
});

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`listening on http://${values.host}:${address.port}`);
});

// A clean exit lets --cpu-prof write its profile.
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => server.close(() => process.exit(0)));
