// The issue's own comparison points as servers, measured in the same run as the ceiling and the scenarios:
//   --kind token   "the minimal work of a token endpoint": 32 random bytes, SHA-256 via crypto.subtle, one INSERT
//                  into node:sqlite in WAL with synchronous=NORMAL, a token response;
//   --kind bearer  "a bearer-protected route that only looks the token up and answers fixed JSON": SHA-256 of the
//                  presented token (node:crypto's synchronous one, as the peers hash), one indexed SELECT, a fixed
//                  GraphQL-shaped body.
// Neither authenticates a client, parses or validates a request, logs, audits, or runs GraphQL: they are floors for
// scenarios 1 and 2 on this machine today, not rivals.
import { createServer, type IncomingMessage } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createHash } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { REFERENCE_BEARER_TOKEN } from "./scenarios.ts";

const encoder = new TextEncoder();

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Resolves once the request body has been read (and dropped): both references answer only after it. */
function drained(req: IncomingMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    req.on("data", () => {});
    req.once("end", resolve);
    req.once("error", reject);
  });
}

function openReferenceDb(dir: string): DatabaseSync {
  const db = new DatabaseSync(join(dir, "reference.db"));
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  db.exec("CREATE TABLE tokens (id INTEGER PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, expires_at INTEGER NOT NULL)");
  return db;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kind: { type: "string" },
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
    },
  });
  if (values.kind !== "token" && values.kind !== "bearer") throw new TypeError("--kind is token or bearer");
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-reference-"));
  const db = openReferenceDb(dir);
  const insert = db.prepare("INSERT INTO tokens (token_hash, expires_at) VALUES (?, ?)");
  const find = db.prepare("SELECT id FROM tokens WHERE token_hash = ? AND expires_at > ?");
  insert.run(await sha256Hex(REFERENCE_BEARER_TOKEN), 4_102_444_800);
  const json = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };
  const countBody = JSON.stringify({ data: { fields: { total_count: 500 } } });

  const server = createServer(async (req, res) => {
    await drained(req);
    const now = Math.floor(Date.now() / 1000);
    if (req.method === "GET") {
      res.writeHead(200, json).end('{"status":"ok"}');
    } else if (values.kind === "token") {
      const token = base64Url(crypto.getRandomValues(new Uint8Array(32)));
      insert.run(await sha256Hex(token), now + 1800);
      const body = JSON.stringify({ access_token: token, token_type: "Bearer", expires_in: 1800, scope: "fields:read", created_at: now });
      res.writeHead(200, json).end(body);
    } else {
      const presented = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
      const found = presented !== undefined &&
        find.get(createHash("sha256").update(presented).digest("hex"), now) !== undefined;
      if (found) res.writeHead(200, json).end(countBody);
      else res.writeHead(401, { ...json, "www-authenticate": 'Bearer error="invalid_token"' }).end('{"error":"invalid_token"}');
    }
  });
  server.listen(Number(values.port), values.host, () => {
    const address = server.address();
    if (address && typeof address === "object") console.log(`listening on http://${values.host}:${address.port}`);
  });
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      server.close(() => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      });
      // Keep-alive connections a client left open would hold close() up.
      server.closeAllConnections();
    });
  }
}

await main();
