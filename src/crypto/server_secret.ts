// A key derived from one of the server_secrets rows every instance on the database shares.
import type { Deps } from "../deps.ts";
import { nowSeconds } from "../deps.ts";
import { randomId } from "./random.ts";

/**
 * The key `derive` makes from the stored secret `name`, which the first instance to ask creates. Loaded once per app,
 * on first use; a failed load is retried by the next call rather than remembered.
 */
export function serverSecretKey<T>(
  deps: Pick<Deps, "store" | "clock" | "random">,
  name: string,
  derive: (secret: string) => T | Promise<T>,
): () => Promise<T> {
  let key: Promise<T> | undefined;
  const load = async (): Promise<T> =>
    await derive(await deps.store.secrets.ensure(name, randomId(deps.random, 32), nowSeconds(deps.clock)));
  return () => {
    key ??= load().catch((error: unknown) => {
      key = undefined;
      throw error;
    });
    return key;
  };
}
