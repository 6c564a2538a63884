import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { isCrossSiteRequest } from "../../src/http/request_site.ts";

const BASE_URL = "https://auth.example";

const rows: Array<{ name: string; headers: Record<string, string>; crossSite: boolean }> = [
  { name: "no Fetch Metadata and no Origin (an older browser, curl)", headers: {}, crossSite: false },
  { name: "Sec-Fetch-Site: same-origin", headers: { "sec-fetch-site": "same-origin" }, crossSite: false },
  { name: "Sec-Fetch-Site: none (typed into the address bar)", headers: { "sec-fetch-site": "none" }, crossSite: false },
  { name: "Sec-Fetch-Site: cross-site", headers: { "sec-fetch-site": "cross-site" }, crossSite: true },
  { name: "the base URL's own Origin", headers: { origin: "https://auth.example" }, crossSite: false },
  // What Chromium sends for our own forms: the pages' Referrer-Policy: no-referrer turns a POST's Origin into "null".
  { name: "Origin: null from our own page", headers: { origin: "null", "sec-fetch-site": "same-origin" }, crossSite: false },
  { name: "another site's Origin", headers: { origin: "https://evil.example" }, crossSite: true },
  { name: "a sibling subdomain's Origin", headers: { origin: "https://evil.auth.example" }, crossSite: true },
  { name: "the same host over http", headers: { origin: "http://auth.example" }, crossSite: true },
  { name: "Origin: null with Sec-Fetch-Site: cross-site", headers: { origin: "null", "sec-fetch-site": "cross-site" }, crossSite: true },
];

for (const row of rows) {
  test(`isCrossSiteRequest: ${row.name} is ${row.crossSite ? "" : "not "}cross-site`, () => {
    const request = new Request(`${BASE_URL}/signout`, { method: "POST", headers: row.headers });
    assert.equal(isCrossSiteRequest(request, BASE_URL), row.crossSite);
  });
}
