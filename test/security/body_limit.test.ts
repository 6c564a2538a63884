import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { openTestApp, type TestApp } from "../helpers/test_app.ts";
import { BASE } from "../helpers/requests.ts";
import { clientCredentials } from "./grants.ts";

const CHUNK = 4_096;

/** A body that never ends; `pulled()` says how many bytes the server asked for. */
function endlessBody(byte = 0x61): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const chunk = new Uint8Array(CHUNK).fill(byte);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += CHUNK;
      controller.enqueue(chunk);
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => pulled };
}

interface Target {
  path: string;
  type: string;
  headers?: (t: TestApp) => Promise<Record<string, string>>;
  html?: boolean;
}

const targets: Target[] = [
  { path: "/oauth/token", type: "application/json" },
  { path: "/oauth/token", type: "application/x-www-form-urlencoded" },
  { path: "/oauth/revoke", type: "application/json" },
  { path: "/oauth/introspect", type: "application/json" },
  {
    path: "/graphql",
    type: "application/json",
    headers: async (t) => ({
      authorization: `Bearer ${await clientCredentials((r) => t.app.fetch(r), await t.seed.client({ grant: "client_credentials" }))}`,
    }),
  },
  { path: "/signin", type: "application/x-www-form-urlencoded", html: true },
  { path: "/oauth/authorize", type: "application/x-www-form-urlencoded", html: true },
];

for (const target of targets) {
  test(`${target.path} (${target.type}) answers an endless body with 413 after reading at most the limit`, async () => {
    const t = await openTestApp();
    const body = endlessBody();
    const headers = { "content-type": target.type, ...(await target.headers?.(t)) };
    const res = await t.app.fetch(new Request(`${BASE}${target.path}`, { method: "POST", headers, body: body.stream, duplex: "half" } as RequestInit));
    assert.equal(res.status, 413);
    if (target.html) assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    else assert.equal((await res.json()).error, "payload_too_large");
    // Stops within a couple of chunks of the limit: the body is never buffered whole.
    assert.ok(body.pulled() > t.config.maxBodyBytes, "the limit was reached");
    assert.ok(body.pulled() <= t.config.maxBodyBytes + 2 * CHUNK, `pulled ${body.pulled()} bytes`);
  });

  test(`${target.path} (${target.type}) refuses a declared Content-Length over the limit without reading the body`, async () => {
    const t = await openTestApp();
    const body = endlessBody();
    const headers = { "content-type": target.type, "content-length": String(t.config.maxBodyBytes + 1), ...(await target.headers?.(t)) };
    const res = await t.app.fetch(new Request(`${BASE}${target.path}`, { method: "POST", headers, body: body.stream, duplex: "half" } as RequestInit));
    assert.equal(res.status, 413);
    assert.ok(body.pulled() <= CHUNK, `pulled ${body.pulled()} bytes`);
  });
}

test("a body of exactly the limit is read and judged on its content, not refused as too large", async () => {
  const t = await openTestApp();
  const text = JSON.stringify({ grant_type: "client_credentials", pad: "x".repeat(t.config.maxBodyBytes - 80) });
  const body = text.padEnd(t.config.maxBodyBytes, " ");
  assert.equal(new TextEncoder().encode(body).length, t.config.maxBodyBytes);
  const res = await t.app.fetch(new Request(`${BASE}/oauth/token`, { method: "POST", headers: { "content-type": "application/json" }, body }));
  assert.notEqual(res.status, 413);
  assert.ok(res.status < 500);
});
