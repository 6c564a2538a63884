// The sign-in's place in the password work limit: whom it waits as, and what a busy refusal costs and records.
import type { Deps, ThrottleKey, WorkOptions } from "../deps.ts";
import { audit } from "../oauth/audit.ts";

/** Addresses remembered for auditing busy refusals; past it the oldest is forgotten (and may be audited again). */
const MAX_AUDITED_ADDRESSES = 10_000;

/**
 * Where a sign-in waits for its password check: under its address bucket and its lowercased username, so neither
 * one address nor one targeted username takes more than a share of the waiting places, and ahead of strangers when
 * the browser holds this user's device cookie (device.ts): an attacker without the password cannot get one.
 */
export function queuePlace(attempt: { bucket: string; username: string; device: string | undefined }): WorkOptions {
  return { keys: [`ip:${attempt.bucket}`, `user:${attempt.username.toLowerCase()}`], priority: attempt.device !== undefined };
}

/**
 * Per app instance: whether a busy refusal from `bucket` is the first one this throttle window, so busy refusals
 * are audited at most once per address bucket per window and instance, however fast an attacker sends them.
 */
export function createBusyAudit(windowSeconds: number): (bucket: string, now: number) => boolean {
  const audited = new Map<string, number>();
  return (bucket, now) => {
    const since = audited.get(bucket);
    if (since !== undefined && now >= since && now - since < windowSeconds) return false;
    audited.delete(bucket);
    if (audited.size >= MAX_AUDITED_ADDRESSES) audited.delete(audited.keys().next().value as string);
    audited.set(bucket, now);
    return true;
  };
}

/**
 * Settles a sign-in the password work limit refused as busy: one failure against its address (one throttle row),
 * so an address that floods the queue locks itself out as wrong passwords would, after the address key's limit of
 * its own requests (another address's refusals never count against it). Usernames are not counted, since no
 * password was checked. Audited as `throttled` with surface "sign_in_busy", at most once per address per window
 * (`firstThisWindow`), and as `throttled` with surface "sign_in" when it starts a lockout.
 */
export async function chargeBusyRefusal(
  deps: Deps,
  refusal: { address: ThrottleKey; bucket: string; ip: string; now: number; firstThisWindow: (bucket: string, now: number) => boolean },
): Promise<void> {
  const lockout = await deps.throttle.fail([refusal.address], refusal.now);
  if (refusal.firstThisWindow(refusal.bucket, refusal.now)) {
    await audit(deps, "throttled", { ip: refusal.ip, detail: { surface: "sign_in_busy" } });
  }
  if (lockout) await audit(deps, "throttled", { ip: refusal.ip, detail: { surface: "sign_in" } });
}
