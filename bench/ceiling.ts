// The ceiling: a bare node:http server answering one fixed JSON body; every scenario is reported as a ratio to it.
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" } } });

// About the size of a token response, so the comparison is not flattered by a tiny body.
const BODY = Buffer.from(JSON.stringify({
  access_token: "fgat_" + "A".repeat(43),
  token_type: "Bearer",
  expires_in: 1800,
  scope: "fields:read",
  created_at: 1_767_225_600,
}));

const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": BODY.byteLength });
  res.end(BODY);
});

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`listening on http://${values.host}:${address.port}`);
});

// A clean exit lets --cpu-prof write its profile.
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => server.close(() => process.exit(0)));
