// Bench-local server used until `src/adapters/node.ts serve` exists: createApp + toNodeListener on one port.
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { openStore } from "../src/store/sqlite/store.ts";
import { toNodeListener } from "../src/adapters/node_listener.ts";

const { values } = parseArgs({
  options: { port: { type: "string", default: "0" }, db: { type: "string" }, host: { type: "string", default: "127.0.0.1" } },
});
if (!values.db) throw new TypeError("--db FILE is required");

const config = loadConfig({ ...process.env, FIELDGATE_DB: values.db, PORT: values.port, HOST: values.host });
const store = openStore(values.db);
const app = createApp({ config, store });
const server = createServer(toNodeListener(app, `http://${values.host}:${values.port}`));

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`listening on http://${values.host}:${address.port}`);
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => server.close(() => store.close().then(() => process.exit(0))));
}
