// The benchmark scenarios: what each one sends, which database it runs against, and the issue's target for it.
import type { LoadScenario } from "./load.ts";
import type { Seeded } from "./seed.ts";
import { createDpopSigner, issuerOf } from "./dpop.ts";

export interface Scenario {
  id: string;
  title: string;
  database: "empty" | "big";
  target?: Target;
  /** May be async: a DPoP scenario first reads the server's issuer and obtains a DPoP-bound token. */
  build(origin: string, seeded: Seeded, accessToken: string): LoadScenario | Promise<LoadScenario>;
}

/** What a row is held to: a ratio to the ceiling, a p99, a base row (big database), a reference server. */
export interface Target {
  ratio?: number;
  p99?: number;
  relativeTo?: string;
  /** A reference's id (REFERENCES): the row must reach at least that server's req/s, measured in the same run. */
  atLeast?: string;
  /** A reference's id shown beside the row for scale, without a verdict. */
  beside?: string;
  /** Peers (PEERS) shown beside the row for scale, measured only with `npm run bench:peers`. */
  peers?: readonly string[];
}

const JSON_HEADERS = { "content-type": "application/json" };
const FORM_HEADERS = { "content-type": "application/x-www-form-urlencoded" };

export const COUNT_QUERY = "{ fields { total_count } }";
export const PAGE_QUERY = `{ fields(first: 50) { total_count nodes { id name area_ha crop season boundary
  centroid { longitude latitude } } page_info { has_next_page end_cursor } } }`;

/** A 2xx GraphQL result must carry data and no errors (GraphQL-over-HTTP reports many errors with status 200). */
const graphqlOk = (body: string) => body.startsWith('{"data"') && !body.includes('"errors"');
const tokenOk = (body: string) => body.includes('"access_token"');

function clientCredentials(origin: string, seeded: Seeded): LoadScenario {
  return {
    origin,
    method: "POST",
    path: "/oauth/token",
    headers: JSON_HEADERS,
    body: JSON.stringify({ grant_type: "client_credentials", client_id: seeded.ccClient.clientId, client_secret: seeded.ccClient.clientSecret }),
    verifyBody: tokenOk,
  };
}

function graphql(origin: string, accessToken: string, query: string): LoadScenario {
  return {
    origin,
    method: "POST",
    path: "/graphql",
    headers: { ...JSON_HEADERS, authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ query }),
    verifyBody: graphqlOk,
  };
}

/** A resource server asks about a live access token of another client (RFC 7662), as a gateway does per request. */
function introspection(origin: string, seeded: Seeded, accessToken: string): LoadScenario {
  const { clientId, clientSecret } = seeded.resourceServer;
  return {
    origin,
    method: "POST",
    path: "/oauth/introspect",
    headers: { ...FORM_HEADERS, authorization: "Basic " + btoa(`${clientId}:${clientSecret}`) },
    body: new URLSearchParams({ token: accessToken }).toString(),
    verifyBody: (body) => body.startsWith('{"active":true'),
  };
}

/** Each request presents the next never-used refresh token of the pre-minted pool. */
function refreshRotation(origin: string, seeded: Seeded): LoadScenario {
  const { clientId, clientSecret, redirectUri } = seeded.authClient;
  let next = 0;
  return {
    origin,
    method: "POST",
    path: "/oauth/token",
    headers: JSON_HEADERS,
    nextBody: () => {
      const refreshToken = seeded.refreshTokens[next++];
      if (refreshToken === undefined) return undefined;
      return JSON.stringify({ grant_type: "refresh_token", client_id: clientId, client_secret: clientSecret, redirect_uri: redirectUri, refresh_token: refreshToken });
    },
    verifyBody: (body) => body.includes('"refresh_token"'),
  };
}

/** Client credentials with a fresh DPoP proof per request: issuance plus a signature check and a replay record. */
async function dpopClientCredentials(origin: string, seeded: Seeded): Promise<LoadScenario> {
  const htu = `${await issuerOf(origin)}/oauth/token`;
  const signer = createDpopSigner();
  return {
    ...clientCredentials(origin, seeded),
    nextHeaders: () => ({ dpop: signer.proof("POST", htu) }),
    verifyBody: (body) => body.includes('"token_type":"DPoP"'),
  };
}

/** total_count with a DPoP-bound token and a fresh proof carrying its hash per request. */
async function dpopGraphql(origin: string, seeded: Seeded, query: string): Promise<LoadScenario> {
  const issuer = await issuerOf(origin);
  const signer = createDpopSigner();
  const issue = clientCredentials(origin, seeded);
  const response = await fetch(origin + issue.path, {
    method: "POST",
    headers: { ...issue.headers, dpop: signer.proof("POST", `${issuer}/oauth/token`) },
    body: issue.body,
  });
  const { access_token: token } = await response.json() as { access_token?: string };
  if (!response.ok || typeof token !== "string") throw new Error(`DPoP token request failed with ${response.status}`);
  return {
    ...graphql(origin, token, query),
    headers: { ...JSON_HEADERS, authorization: `DPoP ${token}` },
    nextHeaders: () => ({ dpop: signer.proof("POST", `${issuer}/graphql`, token) }),
  };
}

export const SCENARIOS: readonly Scenario[] = [
  {
    id: "health", title: "0 GET /healthz (app overhead)", database: "empty",
    build: (origin) => ({ origin, method: "GET", path: "/healthz", verifyBody: (body) => body.includes('"ok"') }),
  },
  {
    // The issue: ">= 0.25 (1.5x the best peer, and at least the bare minimal-work server)".
    id: "token", title: "1 client_credentials token", database: "empty",
    target: { ratio: 0.25, p99: 2, atLeast: "ref-token", peers: ["peer-oidc-provider", "peer-oauth2-server-sqlite", "peer-oauth2-server"] },
    build: (origin, seeded) => clientCredentials(origin, seeded),
  },
  {
    id: "count", title: "2 graphql fields.total_count", database: "empty", target: { ratio: 0.4, p99: 2, beside: "ref-bearer" },
    build: (origin, _seeded, token) => graphql(origin, token, COUNT_QUERY),
  },
  {
    id: "page", title: "3 graphql 50 fields + boundaries", database: "empty",
    build: (origin, _seeded, token) => graphql(origin, token, PAGE_QUERY),
  },
  {
    id: "refresh", title: "4 refresh-token rotation", database: "empty",
    build: (origin, seeded) => refreshRotation(origin, seeded),
  },
  {
    // Issue 37: cheap enough for a gateway to call per request; node-oidc-provider's introspection beside it.
    id: "introspect", title: "5 introspection by a resource server", database: "empty",
    target: { peers: ["peer-oidc-provider-introspect"] },
    build: (origin, seeded, token) => introspection(origin, seeded, token),
  },
  {
    id: "token-dpop", title: "1d client_credentials token with a DPoP proof", database: "empty",
    build: (origin, seeded) => dpopClientCredentials(origin, seeded),
  },
  {
    id: "count-dpop", title: "2d graphql fields.total_count with a DPoP token", database: "empty",
    build: (origin, seeded) => dpopGraphql(origin, seeded, COUNT_QUERY),
  },
  {
    id: "token-big", title: "1 token, 1M tokens/100k fields", database: "big", target: { relativeTo: "token" },
    build: (origin, seeded) => clientCredentials(origin, seeded),
  },
  {
    id: "count-big", title: "2 total_count, 1M tokens/100k fields", database: "big", target: { relativeTo: "count" },
    build: (origin, _seeded, token) => graphql(origin, token, COUNT_QUERY),
  },
];

/** The one token the bearer reference (bench/references.ts) accepts. */
export const REFERENCE_BEARER_TOKEN = "fgat_reference_" + "R".repeat(43);

/** A comparison server and the load it gets: the same work as the scenario it stands beside. */
export interface Reference {
  id: string;
  title: string;
  /** Started as `node <script> --kind <kind> --port P`; answers 2xx to a GET of `readyPath` once up. */
  server: { script: string; kind: string; readyPath: string };
  /** The load; async where it needs a request first (a token to introspect). */
  build(origin: string, seeded: Seeded): LoadScenario | Promise<LoadScenario>;
}

const reference = (kind: "token" | "bearer") => ({ script: "bench/references.ts", kind, readyPath: "/" });

/**
 * The issue's own comparison points, served by bench/references.ts: the minimal work of a token endpoint (scenario
 * 1's requests) and a bearer lookup answering fixed JSON (scenario 2's requests, with the reference's token).
 */
export const REFERENCES: readonly Reference[] = [
  { id: "ref-token", title: "ref: minimal token endpoint", server: reference("token"), build: (origin, seeded) => clientCredentials(origin, seeded) },
  {
    id: "ref-bearer", title: "ref: bearer lookup + fixed JSON", server: reference("bearer"),
    build: (origin) => graphql(origin, REFERENCE_BEARER_TOKEN, COUNT_QUERY),
  },
];

/** The reference servers and peers a row is measured beside, in the order they run before it. */
export function comparedWith(target: Target | undefined): string[] {
  if (!target) return [];
  return [target.atLeast, target.beside, ...(target.peers ?? [])].filter((id) => id !== undefined);
}

/** The servers of bench/peers/serve.ts. */
export const PEER_KINDS = ["oidc-provider", "oauth2-server", "oauth2-server-sqlite"] as const;
export type PeerKind = typeof PEER_KINDS[number];

/** The one client every peer registers. */
export const PEER_CLIENT = { clientId: "peer-client", clientSecret: "peer-secret-" + "S".repeat(32), scope: "fields:read" };

/**
 * The issue's "two best-known Node OAuth servers" (bench/peers/serve.ts), under scenario 1's work: a
 * client_credentials token for a client authenticating in the body. RFC 6749 §4.4.2 has the request form-encoded,
 * which is what both libraries accept; fieldgate takes the spec's JSON.
 */
export const PEERS: readonly Reference[] = (
  [
    ["peer-oidc-provider", "peer: oidc-provider, its in-memory store", "oidc-provider"],
    ["peer-oauth2-server-sqlite", "peer: oauth2-server, SQLite store", "oauth2-server-sqlite"],
    ["peer-oauth2-server", "peer: oauth2-server, in-memory Map", "oauth2-server"],
  ] as const
).map(([id, title, kind]) => ({
  id,
  title,
  server: { script: "bench/peers/serve.ts", kind, readyPath: "/.well-known/openid-configuration" },
  build: (origin: string) => peerClientCredentials(origin),
}));

/** oidc-provider introspecting one of its client_credentials tokens (its default policy lets a confidential client ask about any). */
export const PEER_INTROSPECTION: Reference = {
  id: "peer-oidc-provider-introspect",
  title: "peer: oidc-provider introspection, in-memory store",
  server: { script: "bench/peers/serve.ts", kind: "oidc-provider", readyPath: "/.well-known/openid-configuration" },
  build: async (origin) => {
    const { clientId, clientSecret } = PEER_CLIENT;
    const minted = peerClientCredentials(origin);
    const response = await fetch(origin + minted.path, { method: "POST", headers: minted.headers, body: minted.body });
    const { access_token: token } = await response.json() as { access_token?: string };
    if (!response.ok || typeof token !== "string") throw new Error(`oidc-provider token request failed with ${response.status}`);
    return {
      origin,
      method: "POST",
      path: "/token/introspection",
      headers: FORM_HEADERS,
      body: new URLSearchParams({ token, client_id: clientId, client_secret: clientSecret }).toString(),
      verifyBody: (body) => body.startsWith('{"active":true'),
    };
  },
};

/** A form-encoded client_credentials request with client_secret_post, as RFC 6749 §4.4.2 and §2.3.1 write it. */
export function peerClientCredentials(origin: string): LoadScenario {
  const { clientId, clientSecret, scope } = PEER_CLIENT;
  return {
    origin,
    method: "POST",
    path: "/token",
    headers: FORM_HEADERS,
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret, scope }).toString(),
    verifyBody: tokenOk,
  };
}

/** One real client_credentials request; the GraphQL scenarios reuse this token, as a well-behaved client does. */
export async function mintAccessToken(origin: string, seeded: Seeded): Promise<string> {
  const scenario = clientCredentials(origin, seeded);
  const response = await fetch(origin + scenario.path, { method: "POST", headers: scenario.headers, body: scenario.body });
  const body = await response.json() as { access_token?: string };
  if (!response.ok || typeof body.access_token !== "string") {
    throw new Error(`token request failed with ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.access_token;
}
