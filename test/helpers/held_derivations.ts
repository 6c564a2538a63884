// Password derivations held in flight until the test lets them go: limits on concurrent work, tested without timing.
import type { App } from "../../src/app.ts";

export interface HeldDerivations {
  /** The passwords whose derivation has started, in the order they started. */
  started: string[];
  /** Resolves once `count` derivations have started in all. */
  startedAtLeast(count: number): Promise<void>;
  /** Lets the oldest held derivation finish with the real PBKDF2 result. */
  releaseNext(): void;
}

/** Replaces the app's PBKDF2 with one that waits for releaseNext() before deriving. */
export function holdDerivations(app: App): HeldDerivations {
  const real = app.deps.pbkdf2;
  const started: string[] = [];
  const held: (() => void)[] = [];
  const watchers: { count: number; resolve: () => void }[] = [];
  app.deps.pbkdf2 = async (password, salt, iterations) => {
    started.push(password);
    for (const watcher of watchers.filter((w) => started.length >= w.count)) watcher.resolve();
    await new Promise<void>((resolve) => held.push(resolve));
    return real(password, salt, iterations);
  };
  return {
    started,
    startedAtLeast: (count) =>
      started.length >= count ? Promise.resolve() : new Promise((resolve) => watchers.push({ count, resolve })),
    releaseNext() {
      const next = held.shift();
      if (!next) throw new Error("no derivation is held");
      next();
    },
  };
}
