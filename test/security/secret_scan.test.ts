import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { buildFileApp } from "./file_app.ts";
import { METRICS_TOKEN, fullFlow } from "./full_flow.ts";

function leaks(haystack: string, secrets: readonly string[]): string[] {
  return secrets.filter((s) => haystack.includes(s) || haystack.includes(encodeURIComponent(s)));
}

test("after every flow, no plaintext secret, token, code, cookie or password appears in the log or the database files", async () => {
  const f = buildFileApp({ FIELDGATE_METRICS_TOKEN: METRICS_TOKEN });
  try {
    const secrets = await fullFlow(f);
    assert.ok(secrets.length >= 16, `collected ${secrets.length} secrets`);
    const logText = f.log.map((l) => JSON.stringify(l)).join("\n");
    assert.ok(f.log.some((l) => l.event.startsWith("audit.")), "the flow produced audit events");
    assert.deepEqual(leaks(logText, secrets), [], "secret in the log stream");
    const whileOpen = f.diskBytes();
    assert.ok(whileOpen.length > 0);
    assert.deepEqual(leaks(whileOpen, secrets), [], "secret in the database files while open");
    const audit = JSON.stringify(await f.store.audit.list({}));
    assert.deepEqual(leaks(audit, secrets), [], "secret in the audit table");
    await f.store.maintenance!.checkpoint();
    assert.deepEqual(leaks(f.diskBytes(), secrets), [], "secret in the database files after a checkpoint");
  } finally {
    await f.cleanup();
  }
});

test("the scan finds a secret that is written to disk (the scan itself can fail)", async () => {
  const f = buildFileApp();
  try {
    const canary = "fgat_canary-0123456789abcdefghijklmnopqrstuvwxyz";
    await f.store.audit.insert({ at: 1, event: "canary", clientId: canary, userId: null, ip: null, detail: null });
    f.log.push({ event: "canary", fields: { token: canary } });
    assert.deepEqual(leaks(f.diskBytes(), [canary]), [canary]);
    assert.deepEqual(leaks(JSON.stringify(f.log), [canary]), [canary]);
  } finally {
    await f.cleanup();
  }
});
