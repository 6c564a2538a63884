// The demo client's per-browser memory: a demo_states row keyed by the digest of the demo cookie, sealed with it.
//
// Why SQLite and not a map in this process: under `serve --workers N` the kernel hands each connection to whichever
// worker accepts it (node:cluster SCHED_NONE), so a demo started on one worker often comes back to another, which
// would not know its state. The database is what the workers already share, with the same durability and expiry
// as sessions. Why sealed: the state holds the demo's tokens and PKCE verifier, which the client must be able to
// send again, so a digest will not do; they are encrypted under a key derived from the cookie value, which only
// the browser holds (the row key is its SHA-256), so the database file alone yields nothing usable.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { openSealed, sealText } from "../crypto/seal.ts";
import { cookieName, readCookies, setCookie } from "./cookies.ts";
import type { DemoStep } from "./demo.ts";

/** What the demo client remembers for one browser; never rendered in full. Its expiry is the row's. */
export interface DemoState {
  state?: string;
  verifier?: string;
  accessToken?: string;
  refreshToken?: string;
  steps: DemoStep[];
  error?: string;
}

/** A loaded demo: the raw cookie value (for re-saving and CSRF) and its state. */
export interface FoundDemo {
  value: string;
  state: DemoState;
}

/** Reads and writes demo state for a request's cookie; one instance per app. */
export interface DemoStore {
  keyOf(request: Request): string | undefined;
  load(request: Request): Promise<FoundDemo | undefined>;
  save(value: string, state: DemoState): Promise<void>;
  /**
   * Ends the request's demo: deletes its state (the only copy of the demo's tokens) and returns the Set-Cookie
   * value clearing the cookie. Sign-out calls it, so the next person at a shared browser cannot go on with it.
   */
  forget(request: Request): Promise<string>;
}

const DEMO_COOKIE = "fieldgate_demo";

/** The demo cookie's name for this base URL (__Host- prefixed on https). */
export function demoCookieName(deps: Pick<Deps, "config">): string {
  return cookieName(deps.config, DEMO_COOKIE);
}

export const DEMO_TTL_SECONDS = 900;
/** Demos kept at once: anyone may start one without signing in, so the table is bounded (oldest expiry goes). */
const MAX_DEMOS = 1_000;
const KEY_SHAPE = /^fgss_[A-Za-z0-9_-]{43}$/;
const SEAL_PURPOSE = "fieldgate demo state";

/** A demo store over the app's database, so every process serving the same file sees the same demos. */
export function createDemoStore(deps: Deps, cookie = demoCookieName(deps)): DemoStore {
  function keyOf(request: Request): string | undefined {
    const value = readCookies(request).get(cookie);
    return value && KEY_SHAPE.test(value) ? value : undefined;
  }

  async function load(request: Request): Promise<FoundDemo | undefined> {
    const value = keyOf(request);
    if (!value) return undefined;
    const sealed = await deps.store.demoStates.find(await deps.digest(value), nowSeconds(deps.clock));
    const text = sealed === undefined ? undefined : await openSealed(value, sealed, { purpose: SEAL_PURPOSE });
    // Authenticated encryption: only save() below, holding this cookie, can have written the text.
    return text === undefined ? undefined : { value, state: JSON.parse(text) as DemoState };
  }

  async function save(value: string, state: DemoState): Promise<void> {
    const expiresAt = nowSeconds(deps.clock) + DEMO_TTL_SECONDS;
    const sealed = await sealText(value, JSON.stringify(state), { purpose: SEAL_PURPOSE, random: deps.random });
    await deps.store.demoStates.save({ keyHash: await deps.digest(value), sealed, expiresAt }, { keep: MAX_DEMOS });
  }

  async function forget(request: Request): Promise<string> {
    const value = keyOf(request);
    if (value) await deps.store.demoStates.delete(await deps.digest(value));
    return setCookie(deps.config, cookie, "", 0);
  }

  return { keyOf, load, save, forget };
}
