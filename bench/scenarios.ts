// The benchmark scenarios: what each one sends, which database it runs against, and the target for it.
import type { LoadScenario } from "./load.ts";
import type { Seeded } from "./seed.ts";

export interface Scenario {
  id: string;
  title: string;
  database: "empty" | "big";
  target?: Target;
  build(origin: string, seeded: Seeded, accessToken: string): LoadScenario;
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
}

const JSON_HEADERS = { "content-type": "application/json" };

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

export const SCENARIOS: readonly Scenario[] = [
  {
    id: "health", title: "0 GET /healthz (app overhead)", database: "empty",
    build: (origin) => ({ origin, method: "GET", path: "/healthz", verifyBody: (body) => body.includes('"ok"') }),
  },
  {
    // The issue: ">= 0.25 (1.5x the best peer, and at least the bare minimal-work server)".
    id: "token", title: "1 client_credentials token", database: "empty", target: { ratio: 0.25, p99: 2, atLeast: "ref-token" },
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

/** A reference server of bench/references.ts and the load it gets: the same requests as the scenario it floors. */
export interface Reference {
  id: string;
  title: string;
  kind: "token" | "bearer";
  build(origin: string, seeded: Seeded): LoadScenario;
}

/**
 * The issue's own comparison points, served by bench/references.ts: the minimal work of a token endpoint (scenario
 * 1's requests) and a bearer lookup answering fixed JSON (scenario 2's requests, with the reference's token).
 */
export const REFERENCES: readonly Reference[] = [
  { id: "ref-token", title: "ref: minimal token endpoint", kind: "token", build: (origin, seeded) => clientCredentials(origin, seeded) },
  {
    id: "ref-bearer", title: "ref: bearer lookup + fixed JSON", kind: "bearer",
    build: (origin) => graphql(origin, REFERENCE_BEARER_TOKEN, COUNT_QUERY),
  },
];

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
