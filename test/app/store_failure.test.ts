// Store failures the boundary answers with 503: a closed store, a busy one, and storage faults, each logged apart.
import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { classifyStoreFailure } from "../../src/app/store_failure.ts";
import { StoreBusyError } from "../../src/store/errors.ts";

const sqliteError = (errcode: number) => Object.assign(new Error("sqlite"), { errcode });

const rows: { name: string; error: unknown; expected: ReturnType<typeof classifyStoreFailure> }[] = [
  { name: "a closed store", error: Object.assign(new Error("database is not open"), { code: "ERR_INVALID_STATE" }), expected: { event: "database_closed", retryAfter: 1 } },
  { name: "a busy store", error: new StoreBusyError("locked"), expected: { event: "database_busy", retryAfter: 1 } },
  { name: "a full disk", error: sqliteError(13), expected: { event: "database_unavailable", retryAfter: 10, fault: "full" } },
  { name: "a read-only file", error: sqliteError(8), expected: { event: "database_unavailable", retryAfter: 10, fault: "read-only" } },
  { name: "PostgreSQL's connection slots all taken (53300)", error: Object.assign(new Error("remaining connection slots are reserved"), { code: "53300" }), expected: { event: "database_connections_exhausted", retryAfter: 1, fault: "connections exhausted", degraded: true } },
  { name: "a refused connection", error: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), expected: { event: "database_unavailable", retryAfter: 10, fault: "unreachable", pinged: true } },
  { name: "a lock timeout (55P03)", error: Object.assign(new Error("lock timeout"), { code: "55P03" }), expected: { event: "database_busy", retryAfter: 1 } },
  { name: "any other error", error: new TypeError("bug"), expected: undefined },
];

for (const row of rows) {
  test(`classifyStoreFailure: ${row.name}`, () => {
    assert.deepEqual(classifyStoreFailure(row.error), row.expected);
  });
}
