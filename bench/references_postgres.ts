// The issue's minimal PostgreSQL servers (issue 36), measured by `npm run bench -- --store postgres` on the same
// cluster, settings and pinned postgres.js (pool of 4, statements prepared) as fieldgate:
//   --kind token1   parse the JSON body, 32 random bytes, SHA-256, one INSERT;
//   --kind token2   token1 plus a client SELECT and a constant-time secret check: two round trips;
//   --kind count    SHA-256 of the bearer token, one indexed SELECT, a fixed GraphQL-shaped body;
//   --kind refresh  the client SELECT and check, an UPDATE claiming the presented refresh token, an INSERT of the
//                   new pair: three round trips.
// None validates a request beyond that, logs, audits, throttles or re-checks anything: floors, not rivals.
// The tables are bench/pg_reference_db.ts's, seeded before the server starts.
import { createServer, type IncomingMessage } from "node:http";
import { createHash, timingSafeEqual } from "node:crypto";
import { parseArgs } from "node:util";
import postgres from "postgres";

const KINDS = ["token1", "token2", "count", "refresh"] as const;
type Kind = (typeof KINDS)[number];

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.once("end", () => resolve(text));
    req.once("error", reject);
  });
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const randomToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");

type Handler = (input: { text: string; authorization: string | undefined; now: number }) => Promise<[number, string]>;

function handlers(sql: postgres.Sql): Record<Kind, Handler> {
  const issue = async (clientId: number, now: number): Promise<[number, string]> => {
    const token = randomToken();
    await sql`INSERT INTO ref_tokens (token_hash, kind, client_id, expires_at) VALUES (${sha256(token)}, 'access', ${clientId}, ${now + 1800})`;
    return [200, JSON.stringify({ access_token: token, token_type: "Bearer", expires_in: 1800, scope: "fields:read", created_at: now })];
  };
  const client = async (form: Record<string, string>): Promise<number | undefined> => {
    const [row] = await sql`SELECT id, secret_hash FROM ref_clients WHERE client_id = ${form.client_id ?? ""}`;
    const presented = Buffer.from(sha256(form.client_secret ?? ""));
    const stored = Buffer.from(String(row?.secret_hash ?? ""));
    return row && stored.length === presented.length && timingSafeEqual(stored, presented) ? Number(row.id) : undefined;
  };
  const refused: [number, string] = [400, '{"error":"invalid_grant"}'];
  return {
    token1: async ({ text, now }) => (JSON.parse(text), issue(0, now)),
    token2: async ({ text, now }) => {
      const id = await client(JSON.parse(text));
      return id === undefined ? [401, '{"error":"invalid_client"}'] : issue(id, now);
    },
    count: async ({ authorization, now }) => {
      const presented = /^Bearer (\S+)$/.exec(authorization ?? "")?.[1] ?? "";
      const [row] = await sql`SELECT id FROM ref_tokens WHERE token_hash = ${sha256(presented)} AND kind = 'access' AND expires_at > ${now}`;
      return row ? [200, '{"data":{"fields":{"total_count":500}}}'] : [401, '{"error":"invalid_token"}'];
    },
    refresh: async ({ text, now }) => {
      const form = JSON.parse(text);
      const id = await client(form);
      if (id === undefined) return [401, '{"error":"invalid_client"}'];
      const [claimed] = await sql`UPDATE ref_tokens SET rotated_at = ${now} WHERE token_hash = ${sha256(form.refresh_token ?? "")}
        AND kind = 'refresh' AND client_id = ${id} AND rotated_at IS NULL AND expires_at > ${now} RETURNING id`;
      if (!claimed) return refused;
      const [access, refresh] = [randomToken(), randomToken()];
      await sql`INSERT INTO ref_tokens (token_hash, kind, client_id, expires_at, parent_id)
        VALUES (${sha256(access)}, 'access', ${id}, ${now + 1800}, ${claimed.id}),
          (${sha256(refresh)}, 'refresh', ${id}, ${now + 2_592_000}, ${claimed.id})`;
      return [200, JSON.stringify({ access_token: access, token_type: "Bearer", expires_in: 1800, refresh_token: refresh, scope: "fields:read" })];
    },
  };
}

function main(): void {
  const { values } = parseArgs({
    options: { kind: { type: "string" }, port: { type: "string", default: "0" }, database: { type: "string" } },
  });
  const kind = values.kind as Kind;
  if (!KINDS.includes(kind)) throw new TypeError(`--kind is one of ${KINDS.join(", ")}`);
  if (!values.database) throw new TypeError("--database is the PostgreSQL URL");
  const sql = postgres(values.database, { max: 4, fetch_types: false, types: { int8: { to: 20, from: [20], serialize: String, parse: Number } } as never });
  const handle = handlers(sql)[kind];
  const headers = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };
  const server = createServer(async (req, res) => {
    const text = await body(req);
    if (req.method === "GET") return void res.writeHead(200, headers).end('{"status":"ok"}');
    try {
      const [status, answer] = await handle({ text, authorization: req.headers.authorization, now: Math.floor(Date.now() / 1000) });
      res.writeHead(status, headers).end(answer);
    } catch (error) {
      console.error(error);
      res.writeHead(500, headers).end('{"error":"server_error"}');
    }
  });
  server.listen(Number(values.port), "127.0.0.1", () => {
    const address = server.address();
    if (address && typeof address === "object") console.log(`listening on http://127.0.0.1:${address.port}`);
  });
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      server.close(() => void sql.end({ timeout: 1 }).then(() => process.exit(0)));
      server.closeAllConnections();
    });
  }
}

main();
