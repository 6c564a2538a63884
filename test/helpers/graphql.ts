// GraphQL test helpers: a two-organization world with tokens, and one-line query calls through app.fetch.
import { BASE } from "./requests.ts";
import { buildTestApp, type TestApp } from "./test_app.ts";
import { mintAccessToken } from "./tokens.ts";

export interface GraphqlWorld {
  t: TestApp;
  /** Client-credentials token acting as acme's integration user. */
  acmeToken: string;
  /** Authorization-code token acting as a person in globex only. */
  globexToken: string;
  acmeFieldCount: number;
  globexFieldCount: number;
}

/** acme has 7 wheat fields, globex 4 barley fields; each token's user belongs to one organization. */
export async function buildWorld(env: Record<string, string> = {}): Promise<GraphqlWorld> {
  const t = buildTestApp(env);
  await t.seed.fields(7, { org: "acme", crop: "wheat", season: "2026" });
  await t.seed.fields(4, { org: "globex", crop: "barley", season: "2025" });
  const { client: integration } = await t.seed.client({ grant: "client_credentials", org: "acme" });
  const { client: app } = await t.seed.client({ grant: "authorization_code" });
  const person = await t.seed.user({ org: "globex" });
  const acmeToken = await mintAccessToken(t, { client: integration });
  const globexToken = await mintAccessToken(t, { client: app, userId: person.id, grantType: "authorization_code" });
  return { t, acmeToken, globexToken, acmeFieldCount: 7, globexFieldCount: 4 };
}

/** A POST /graphql request with a bearer token. */
export function graphqlRequest(token: string | undefined, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`${BASE}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }), ...headers },
    body: JSON.stringify(body),
  });
}

export interface GqlBody {
  data?: Record<string, any> | null;
  errors?: { message: string; path?: unknown[]; extensions?: { code?: string } }[];
}

/** Runs a query and returns status and parsed body. */
export async function gql(
  t: TestApp,
  token: string,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ status: number; body: GqlBody }> {
  const res = await t.app.fetch(graphqlRequest(token, { query, variables }));
  return { status: res.status, body: (await res.json()) as GqlBody };
}
