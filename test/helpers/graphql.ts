// GraphQL test helpers: a two-organization world with tokens, and one-line query calls through app.fetch.
import { createIdCodec, type IdType } from "../../src/graphql/cursor.ts";
import { BASE } from "./requests.ts";
import { openTestApp, type TestApp } from "./test_app.ts";
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
  const t = await openTestApp(env);
  await t.seed.fields(7, { org: "acme", crop: "wheat", season: "2026" });
  await t.seed.fields(4, { org: "globex", crop: "barley", season: "2025" });
  const { client: integration } = await t.seed.client({ grant: "client_credentials", org: "acme" });
  const { client: app } = await t.seed.client({ grant: "authorization_code" });
  const person = await t.seed.user({ org: "globex" });
  const acmeToken = await mintAccessToken(t, { client: integration });
  const globexToken = await mintAccessToken(t, { client: app, userId: person.id, grantType: "authorization_code" });
  return { t, acmeToken, globexToken, acmeFieldCount: 7, globexFieldCount: 4 };
}

/** The global id (or, for a field, the cursor) the app serves for a row: sealed under the key its store holds. */
export async function globalIdOf(t: TestApp, type: IdType, rowId: number): Promise<string> {
  const [id] = await createIdCodec(t.app.deps).seal(type, [rowId]);
  return id!;
}

/** A POST /graphql request with a bearer token. */
export function graphqlRequest(token: string | undefined, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`${BASE}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }), ...headers },
    body: JSON.stringify(body),
  });
}

/** Any value JSON.parse can return. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface GqlBody {
  data?: { [key: string]: Json } | null;
  errors?: { message: string; path?: unknown[]; extensions?: { code?: string } }[];
}

/** Walks parsed JSON by object keys and array indexes (negative from the end); undefined where a step is missing. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (Array.isArray(current) && typeof key === "number") current = current.at(key);
    else if (typeof current === "object" && current !== null && !Array.isArray(current) && typeof key === "string") {
      current = (current as Record<string, unknown>)[key];
    } else return undefined;
  }
  return current;
}

/** The array at `path`; throws (failing the test) when something else is there. */
export function listAt(value: unknown, ...path: (string | number)[]): unknown[] {
  const found = at(value, ...path);
  if (!Array.isArray(found)) throw new TypeError(`Expected an array at ${path.join(".")}, got ${JSON.stringify(found)}`);
  return found;
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
