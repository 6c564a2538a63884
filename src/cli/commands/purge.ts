// `purge`: deletes codes, tokens and sessions expired longer ago than FIELDGATE_RETENTION, and audit events older
// than FIELDGATE_AUDIT_RETENTION.
import { dropWalCopies } from "../erasure.ts";
import type { Command } from "../types.ts";

export const purge: Command = {
  name: "purge",
  summary: "delete expired credentials past FIELDGATE_RETENTION, audit events past FIELDGATE_AUDIT_RETENTION",
  positionals: [],
  flags: {},
  async run({ config, io, store, now }) {
    const counts = await store.purge(now, config);
    await dropWalCopies({ store, io, config });
    const text = Object.entries(counts).map(([kind, n]) => `  ${kind.padEnd(12)}${n}`).join("\n");
    const retention = `retention ${config.retentionSeconds} s, audit retention ${config.auditRetentionSeconds} s`;
    return { json: { ...counts }, text: `Purged (${retention}):\n${text}\n` };
  },
};
