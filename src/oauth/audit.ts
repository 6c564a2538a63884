// Security events: one call records the audit row and emits the matching structured log line.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import type { NewAuditEvent } from "../store/contract.ts";

export type AuditEventName =
  | "token_issued"
  | "token_refreshed"
  | "token_revoked"
  | "refresh_reuse_detected"
  | "code_reuse_detected"
  | "client_auth_failed"
  | "sign_in_failed"
  | "sign_in_succeeded"
  | "signed_out"
  | "other_sessions_ended"
  | "consent_granted"
  | "consent_denied"
  | "access_revoked_by_user"
  | "secret_rotated"
  | "client_disabled"
  | "client_enabled"
  | "client_deleted"
  | "user_disabled"
  | "user_enabled"
  | "user_deleted"
  | "user_created"
  | "client_created"
  | "fields_imported"
  | "doorkeeper_imported"
  | "membership_added"
  | "membership_removed"
  | "password_changed"
  | "redirect_uri_changed"
  | "client_dpop_changed"
  | "throttled";

export interface AuditFacts {
  clientId?: string | null;
  userId?: number | null;
  ip?: string | null;
  /** Non-secret facts only: grant type, reason, scope. Never tokens, codes, secrets or passwords. */
  detail?: Record<string, unknown>;
}

type AuditDeps = Pick<Deps, "store" | "clock" | "log"> & Partial<Pick<Deps, "metrics">>;

/** Records a security event in the audit table and the log stream. */
export async function audit(deps: AuditDeps, event: AuditEventName, facts: AuditFacts = {}): Promise<void> {
  await deps.store.audit.insert(auditRow(deps, event, facts));
  announceAudit(deps, event, facts);
}

/** The audit row for an event, for a store operation that writes it inside its own transaction. */
export function auditRow(deps: Pick<Deps, "clock">, event: AuditEventName, facts: AuditFacts = {}): NewAuditEvent {
  return {
    at: nowSeconds(deps.clock),
    event,
    clientId: facts.clientId ?? null,
    userId: facts.userId ?? null,
    ip: facts.ip ?? null,
    detail: facts.detail ?? null,
  };
}

/** Counts and logs an event whose row was already written (by audit(), or by a store transaction via auditRow). */
export function announceAudit(deps: AuditDeps, event: AuditEventName, facts: AuditFacts = {}): void {
  // Token and reuse counters are derived here so the OAuth code needs no separate metrics calls.
  deps.metrics?.recordAuditEvent(event, facts.detail);
  deps.log(`audit.${event}`, {
    client_id: facts.clientId ?? undefined,
    user_id: facts.userId ?? undefined,
    ip: facts.ip ?? undefined,
    ...facts.detail,
  });
}
