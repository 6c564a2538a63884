// Request ids and the client's address: what is kept from the request and what is replaced.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { clientAddress, requestIdOf } from "../../src/app/request_facts.ts";

const withHeaders = (headers: Record<string, string>) => new Request("http://x/", { headers });
const zeros = (n: number) => new Uint8Array(n);

test("a sane incoming request id is kept; a missing or hostile one becomes 16 hex digits from the app's random", () => {
  assert.equal(requestIdOf(withHeaders({ "x-request-id": "abc-123" }), zeros), "abc-123");
  assert.equal(requestIdOf(withHeaders({ "x-request-id": "<script>" }), zeros), "0000000000000000");
  assert.equal(requestIdOf(withHeaders({}), (n) => new Uint8Array(n).fill(0xab)), "abababababababab");
});

const rows: { name: string; remote?: string; forwarded?: string; trustProxy: boolean; expected: string }[] = [
  { name: "the socket address", remote: "192.0.2.1", trustProxy: false, expected: "192.0.2.1" },
  { name: "no address at all", trustProxy: false, expected: "unknown" },
  { name: "a forwarded address ignored without a trusted proxy", remote: "192.0.2.1", forwarded: "198.51.100.7", trustProxy: false, expected: "192.0.2.1" },
  { name: "the right-most forwarded address behind a proxy", remote: "10.0.0.1", forwarded: "6.6.6.6, 198.51.100.7", trustProxy: true, expected: "198.51.100.7" },
  { name: "a forwarded value that is no address", remote: "10.0.0.1", forwarded: "nonsense", trustProxy: true, expected: "10.0.0.1" },
  { name: "an embedder's remote address that is no address", remote: "not-an-ip", trustProxy: false, expected: "unknown" },
];

for (const row of rows) {
  test(`clientAddress: ${row.name}`, () => {
    const request = withHeaders(row.forwarded ? { "x-forwarded-for": row.forwarded } : {});
    assert.equal(clientAddress(request, { remoteAddress: row.remote, trustProxy: row.trustProxy }), row.expected);
  });
}
