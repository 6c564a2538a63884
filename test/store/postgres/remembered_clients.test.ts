// The client rows a PostgreSQL store remembers: the latest read per client_id, a bounded number of them.
import assert from "node:assert/strict";
import type { TokenClient } from "../../../src/store/contract.ts";
import { createRememberedClients } from "../../../src/store/postgres/remembered_clients.ts";
import { test } from "../../helpers/bounded.ts";

function row(clientId: string, secretHash = "digest"): TokenClient {
  return {
    id: 1, clientId, secretHash, grantType: "client_credentials", redirectUri: null, redirectUris: [], scope: "fields:read",
    integrationUserId: 2, disabled: false, requireDpop: false, integrationUserEnabled: true,
  };
}

test("the latest read of a client replaces the one before, and a read that found none forgets it", () => {
  const remembered = createRememberedClients(4);
  remembered.set("a", row("a", "old"));
  remembered.set("a", row("a", "new"));
  assert.equal(remembered.get("a")?.secretHash, "new");
  remembered.set("a", undefined);
  assert.equal(remembered.get("a"), undefined);
});

test("past the limit the client read longest ago is forgotten first", () => {
  const remembered = createRememberedClients(3);
  for (const id of ["a", "b", "c"]) remembered.set(id, row(id));
  remembered.set("a", row("a"));
  remembered.set("d", row("d"));
  assert.deepEqual(["a", "b", "c", "d"].map((id) => remembered.get(id) !== undefined), [true, false, true, true]);
  for (let i = 0; i < 100; i++) remembered.set(`x${i}`, row(`x${i}`));
  assert.equal(["a", "c", "d", ...Array.from({ length: 100 }, (_, i) => `x${i}`)].filter((id) => remembered.get(id)).length, 3);
});
