import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { readBearer } from "../../src/http/bearer.ts";
import { isHttpError } from "../../src/http/errors.ts";

const url = new URL("http://fieldgate.test/graphql");
const withHeader = (authorization: string) => new Request(url, { headers: { authorization } });

// RFC 6750 §3.1: another scheme means the request lacks bearer authentication (bare 401 upstream), while a
// malformed Bearer header is an invalid_request (400).
const ROWS: { name: string; header: string | null; token?: string; malformed?: true }[] = [
  { name: "no header", header: null },
  { name: "a Bearer token", header: "Bearer fgat_abc-._~+/=", token: "fgat_abc-._~+/=" },
  { name: "a lowercase scheme and extra spaces", header: "bearer   fgat_abc  ", token: "fgat_abc" },
  { name: "Basic credentials", header: "Basic Zm9vOmJhcg==" },
  { name: "a Digest challenge response", header: 'Digest username="a", realm="x", nonce="n", uri="/", response="r"' },
  { name: "a scheme with no credentials", header: "Negotiate" },
  { name: "a scheme glued to a token", header: "Bearerfgat_abc" },
  { name: "Bearer with no token", header: "Bearer", malformed: true },
  { name: "Bearer with only spaces", header: "Bearer    ", malformed: true },
  { name: "Bearer with bad characters", header: "Bearer fgat_<script>", malformed: true },
  { name: "Bearer with two tokens", header: "Bearer a b", malformed: true },
  { name: "Bearer with a tab", header: "Bearer\tfgat_abc", malformed: true },
  { name: "no scheme at all", header: "=== abc", malformed: true },
];

for (const row of ROWS) {
  test(`readBearer with ${row.name}`, () => {
    const request = row.header === null ? new Request(url) : withHeader(row.header);
    if (row.malformed) {
      assert.throws(
        () => readBearer(request, url),
        (e) =>
          isHttpError(e) && e.code === "bad_request" && e.status === 400 &&
          e.headers["www-authenticate"] === 'Bearer realm="fieldgate", error="invalid_request"',
      );
    } else {
      assert.equal(readBearer(request, url), row.token);
    }
  });
}

test("readBearer refuses a token in the query string even with a valid header", () => {
  const query = new URL("http://fieldgate.test/graphql?access_token=x");
  assert.throws(() => readBearer(withHeader("Bearer x"), query), (e) => isHttpError(e) && e.code === "bad_request");
});
