// The demo client's per-browser memory: a bounded in-process map keyed by the digest of a cookie value.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { readCookies } from "./cookies.ts";
import type { DemoStep } from "./demo.ts";

/** What the demo client remembers for one browser; never rendered in full. */
export interface DemoState {
  expiresAt: number;
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
}

export const DEMO_TTL_SECONDS = 900;
const MAX_DEMOS = 1_000;
const KEY_SHAPE = /^fgss_[A-Za-z0-9_-]{43}$/;

/** A demo store living in this app's closure; the map is keyed by digest so a memory dump holds no cookie. */
export function createDemoStore(deps: Deps, cookie: string): DemoStore {
  const demos = new Map<string, DemoState>();

  function keyOf(request: Request): string | undefined {
    const value = readCookies(request).get(cookie);
    return value && KEY_SHAPE.test(value) ? value : undefined;
  }

  async function load(request: Request): Promise<FoundDemo | undefined> {
    const value = keyOf(request);
    if (!value) return undefined;
    const state = demos.get(await deps.digest(value));
    if (!state || state.expiresAt <= nowSeconds(deps.clock)) return undefined;
    return { value, state };
  }

  async function save(value: string, state: DemoState): Promise<void> {
    const now = nowSeconds(deps.clock);
    if (demos.size >= MAX_DEMOS) evict(demos, now);
    demos.set(await deps.digest(value), { ...state, expiresAt: now + DEMO_TTL_SECONDS });
  }

  return { keyOf, load, save };
}

/** Drops expired demos, then the oldest, until there is room for one more. */
function evict(demos: Map<string, DemoState>, now: number): void {
  for (const [key, entry] of demos) if (entry.expiresAt <= now) demos.delete(key);
  while (demos.size >= MAX_DEMOS) demos.delete(demos.keys().next().value as string);
}
