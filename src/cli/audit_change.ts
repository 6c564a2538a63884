// The audit event of an admin command, written after the command's change has committed.
import { announceAudit, auditRow, type AuditEventName, type AuditFacts } from "../oauth/audit.ts";
import { messageOf } from "./text.ts";
import type { CommandContext } from "./types.ts";

/**
 * Records the event of a change that has already committed. Should the row fail (the server held the write lock
 * past the busy timeout, a full disk), the command must still report what it did: `clients rotate-secret` shows
 * the new secret only once and the old one no longer works, and a deleted user or client cannot be deleted again
 * to find out. So the failure is a warning on stderr and in the log, the command's answer follows as usual, and
 * the event's log line is written all the same, so the log stream keeps the trail the table missed.
 */
export async function auditChange(
  { store, deps, io }: Pick<CommandContext, "store" | "deps" | "io">,
  event: AuditEventName,
  facts: AuditFacts,
): Promise<void> {
  const auditDeps = { store, clock: deps.clock, log: deps.log };
  try {
    await store.audit.insert(auditRow(auditDeps, event, facts));
  } catch (error) {
    io.stderr(`warning: done, but its audit event (${event}) could not be written: ${messageOf(error)}\n`);
    deps.log("audit_write_failed", { audit_event: event, error: messageOf(error) });
  }
  announceAudit(auditDeps, event, facts);
}
