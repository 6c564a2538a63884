// A controllable clock for tests: time moves only when the test says so.
import type { Clock } from "../../src/deps.ts";

export interface FakeClock {
  clock: Clock;
  /** Moves time forward by whole or fractional seconds. */
  advance(seconds: number): void;
  /** Current fake time in epoch seconds. */
  nowSeconds(): number;
}

/** Starts at a fixed instant (2026-01-01T00:00:00Z) unless told otherwise. */
export function fakeClock(startMs = Date.UTC(2026, 0, 1)): FakeClock {
  let now = startMs;
  return {
    clock: () => now,
    advance(seconds) {
      now += seconds * 1000;
    },
    nowSeconds: () => Math.floor(now / 1000),
  };
}

/** Deterministic random bytes (xorshift) so failures reproduce; never use outside tests. */
export function seededRandom(seed = 0x2545f491): (n: number) => Uint8Array {
  let state = seed >>> 0 || 1;
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      state ^= state << 13;
      state >>>= 0;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      out[i] = state & 0xff;
    }
    return out;
  };
}
