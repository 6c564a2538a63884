import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { serverAudits } from "graphql-http";
import { buildWorld } from "../helpers/graphql.ts";
import { BASE } from "../helpers/requests.ts";

// graphql-http's server audits (GraphQL over HTTP conformance), run against app.fetch with a valid token.
const { t, acmeToken } = await buildWorld();
const audits = serverAudits({
  url: `${BASE}/graphql`,
  fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    request.headers.set("authorization", `Bearer ${acmeToken}`);
    return t.app.fetch(request);
  },
});

assert.ok(audits.length > 40, "the audit list loaded");

for (const audit of audits) {
  test(`graphql-http audit ${audit.id}: ${audit.name}`, async () => {
    const result = await audit.fn();
    assert.equal(result.status, "ok", result.status === "ok" ? "" : result.reason);
  });
}
