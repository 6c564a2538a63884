// The peers the performance issue names ("the two best-known Node OAuth servers, oidc-provider and
// @node-oauth/oauth2-server"), each serving client_credentials at POST /token for `npm run bench:peers`:
//   --kind oidc-provider         oidc-provider with its own quick-start storage (an in-memory LRU), also answering
//                                RFC 7662 introspection at POST /token/introspection;
//   --kind oauth2-server         @node-oauth/oauth2-server behind bare node:http, tokens kept in a Map;
//   --kind oauth2-server-sqlite  the same with the store the issue calls the minimal work of a token endpoint:
//                                node:sqlite in WAL with synchronous=NORMAL, client secrets and tokens kept as
//                                SHA-256 digests (node:crypto), one INSERT per token.
// The harness is as lean as each library allows (no framework beyond what the library brings), so the figures are
// the peers at their best, not a straw man. The two in-memory ones forget every token on restart, which no token
// server with revocation can: they bound what the libraries cost, not what a deployment would.
//
// The packages are installed into bench/peers/node_modules by `npm run bench:peers`, never by the root's `npm ci`:
// they are imported by a computed name so `tsc` does not need them.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createHash, timingSafeEqual } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { PEER_CLIENT, PEER_KINDS, type PeerKind } from "../scenarios.ts";

const LIFETIME_SECONDS = 1800;

// deno-lint-ignore no-explicit-any
type Untyped = any;

/** A package from bench/peers/node_modules, by a name tsc does not resolve. */
async function peerPackage(name: string): Promise<Untyped> {
  try {
    return (await import(name)).default;
  } catch (error) {
    throw new Error(`${name} is not installed: run \`npm run bench:peers\` (or npm ci --prefix bench/peers)`, { cause: error });
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();

function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => resolve(Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()))));
    req.once("error", reject);
  });
}

/** What an @node-oauth/oauth2-server model needs for client_credentials, backed by a Map or by SQLite. */
function oauth2ServerModel(storage: "memory" | "sqlite", dir: string) {
  const client = { id: PEER_CLIENT.clientId, grants: ["client_credentials"], accessTokenLifetime: LIFETIME_SECONDS };
  const common = {
    getUserFromClient: async (c: { id: string }) => ({ id: `integration-${c.id}` }),
    validateScope: async (_user: unknown, _client: unknown, scope: string[] | undefined) => scope ?? [PEER_CLIENT.scope],
  };
  if (storage === "memory") {
    const tokens = new Map<string, unknown>();
    return {
      ...common,
      getClient: async (id: string, secret: string) =>
        id === PEER_CLIENT.clientId && secret === PEER_CLIENT.clientSecret ? client : null,
      saveToken: async (token: { accessToken: string }, c: unknown, user: unknown) => {
        const saved = { ...token, client: c, user };
        tokens.set(token.accessToken, saved);
        return saved;
      },
    };
  }
  const db = new DatabaseSync(join(dir, "peer.db"));
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
    CREATE TABLE clients (client_id TEXT PRIMARY KEY, secret_hash BLOB NOT NULL);
    CREATE TABLE tokens (id INTEGER PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, client_id TEXT NOT NULL,
      expires_at INTEGER NOT NULL, scope TEXT NOT NULL)`);
  db.prepare("INSERT INTO clients VALUES (?, ?)").run(PEER_CLIENT.clientId, sha256(PEER_CLIENT.clientSecret));
  const findClient = db.prepare("SELECT secret_hash FROM clients WHERE client_id = ?");
  const insert = db.prepare("INSERT INTO tokens (token_hash, client_id, expires_at, scope) VALUES (?, ?, ?, ?)");
  return {
    ...common,
    getClient: async (id: string, secret: string | undefined) => {
      const row = findClient.get(id) as { secret_hash: Uint8Array } | undefined;
      return row && timingSafeEqual(sha256(secret ?? ""), row.secret_hash) ? client : null;
    },
    saveToken: async (token: { accessToken: string; accessTokenExpiresAt: Date; scope?: string[] }, c: { id: string }, user: unknown) => {
      const expiresAt = Math.floor(token.accessTokenExpiresAt.getTime() / 1000);
      insert.run(sha256(token.accessToken).toString("hex"), c.id, expiresAt, (token.scope ?? []).join(" "));
      return { ...token, client: c, user };
    },
  };
}

async function oauth2Server(storage: "memory" | "sqlite", dir: string) {
  const OAuth2Server = await peerPackage("@node-oauth/oauth2-server");
  const oauth = new OAuth2Server({ model: oauth2ServerModel(storage, dir), accessTokenLifetime: LIFETIME_SECONDS });
  return createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return;
    }
    const request = new OAuth2Server.Request({ method: req.method, query: {}, headers: req.headers, body: await readForm(req) });
    const response = new OAuth2Server.Response(res);
    try {
      await oauth.token(request, response);
    } catch (error) {
      // The library's errors carry their HTTP status and RFC 6749 name.
      const { code, name } = error as { code?: number; name?: string };
      response.status = code ?? 500;
      response.body = { error: name ?? "server_error" };
    }
    res.writeHead(response.status, { ...response.headers, "content-type": "application/json" }).end(JSON.stringify(response.body));
  });
}

async function oidcProvider(port: number) {
  const Provider = await peerPackage("oidc-provider");
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: [{
      client_id: PEER_CLIENT.clientId,
      client_secret: PEER_CLIENT.clientSecret,
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: "client_secret_post",
      scope: PEER_CLIENT.scope,
    }],
    // Introspection for the introspect row; its default policy answers a confidential client about any token.
    features: { clientCredentials: { enabled: true }, introspection: { enabled: true }, devInteractions: { enabled: false } },
    scopes: [PEER_CLIENT.scope],
    ttl: { ClientCredentials: LIFETIME_SECONDS },
  });
  return createServer(provider.callback());
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { kind: { type: "string" }, port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" } },
  });
  const kind = values.kind as PeerKind;
  if (!PEER_KINDS.includes(kind)) throw new TypeError(`--kind is one of ${PEER_KINDS.join(", ")}`);
  const port = Number(values.port);
  const dir = mkdtempSync(join(tmpdir(), "fieldgate-peer-"));
  const server = kind === "oidc-provider"
    ? await oidcProvider(port)
    : await oauth2Server(kind === "oauth2-server" ? "memory" : "sqlite", dir);
  server.listen(port, values.host, () => {
    const address = server.address();
    if (address && typeof address === "object") console.log(`listening on http://${values.host}:${address.port}`);
  });
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      server.close(() => {
        rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      });
      server.closeAllConnections();
    });
  }
}

await main();
