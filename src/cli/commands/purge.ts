// `purge`: deletes codes, tokens, sessions and audit rows expired longer ago than FIELDGATE_RETENTION.
import type { Command } from "../types.ts";

export const purge: Command = {
  name: "purge",
  summary: "delete expired codes, tokens, sessions and old audit events past the retention window",
  positionals: [],
  flags: {},
  async run({ config, store, now }) {
    const counts = await store.purge(now, config.retentionSeconds);
    const text = Object.entries(counts).map(([kind, n]) => `  ${kind.padEnd(12)}${n}`).join("\n");
    return { json: { ...counts }, text: `Purged (retention ${config.retentionSeconds} s):\n${text}\n` };
  },
};
