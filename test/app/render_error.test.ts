// The wire shape of refusals: transport errors answer with the codes clients already read, next to OAuth's.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { HttpError, type HttpErrorCode } from "../../src/http/errors.ts";
import { invalidGrant } from "../../src/oauth/errors.ts";
import { refusalOf, renderError, renderServerError } from "../../src/app/render_error.ts";
import { createResponders, standardTextResponse } from "../../src/http/respond.ts";

const respond = createResponders(standardTextResponse);

const rows: { code: HttpErrorCode; status: number; wire: string }[] = [
  { code: "not_found", status: 404, wire: "not_found" },
  { code: "method_not_allowed", status: 405, wire: "method_not_allowed" },
  { code: "bad_request", status: 400, wire: "invalid_request" },
  { code: "unsupported_media_type", status: 415, wire: "invalid_request" },
  { code: "not_acceptable", status: 406, wire: "invalid_request" },
  { code: "payload_too_large", status: 413, wire: "payload_too_large" },
  { code: "request_timeout", status: 408, wire: "request_timeout" },
];

for (const row of rows) {
  test(`an HttpError ${row.code} answers ${row.status} ${row.wire}`, async () => {
    const response = renderError(refusalOf(new HttpError(row.code, "why", { headers: { allow: "GET" } })), { surface: "json", requestId: "r", respond });
    assert.equal(response.status, row.status);
    assert.equal(response.headers.get("allow"), "GET");
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.deepEqual(await response.json(), { error: row.wire, error_description: "why" });
  });
}

test("an OAuthError renders as RFC 6749 JSON, or as a page on an HTML surface", async () => {
  const json = renderError(invalidGrant("used"), { surface: "json", requestId: "r", respond });
  assert.deepEqual(await json.json(), { error: "invalid_grant", error_description: "used" });
  const page = renderError(invalidGrant("used"), { surface: "html", requestId: "req-7", respond });
  assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(await page.text(), /req-7/);
});

test("a server error reveals nothing of its cause", async () => {
  const response = renderServerError({ surface: "json", requestId: "r", respond });
  assert.equal(response.status, 500);
  assert.deepEqual(await response.json(), { error: "server_error", error_description: "The server could not complete the request" });
});
