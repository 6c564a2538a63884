// The client rows this store's client authentication read last, by client_id, so that a client_credentials request
// (ClientAttempt.fromMemory) costs one round trip instead of two: its issuance re-checks the row and the gate in the
// statement that inserts the token (TokenClient.remembered). It saves the client read: +17–31 % tokens per second
// and −23–31 % database CPU per token in A B A B runs (docs/performance.md). A row here is only ever a guess: nothing
// is issued on it that the database does not confirm.
import type { TokenClient } from "../contract.ts";

/** How many clients are remembered; the oldest read goes first. Only rows of registered clients are kept. */
const REMEMBERED_CLIENTS = 1_024;

export interface RememberedClients {
  /** The row read last for `clientId`, if any. */
  get(clientId: string): TokenClient | undefined;
  /** Keeps `row` as the latest read of `clientId`; undefined (no such client) forgets it. */
  set(clientId: string, row: TokenClient | undefined): void;
}

export function createRememberedClients(limit = REMEMBERED_CLIENTS): RememberedClients {
  const rows = new Map<string, TokenClient>();
  return {
    get: (clientId) => rows.get(clientId),
    set(clientId, row) {
      // Deleted first, so a row read again moves to the end of the Map's insertion order.
      rows.delete(clientId);
      if (row === undefined) return;
      if (rows.size >= limit) rows.delete(rows.keys().next().value!);
      rows.set(clientId, row);
    },
  };
}
