// What an erasing command (users delete, clients delete, purge) does after its transaction.
import type { CommandContext } from "./types.ts";

/**
 * Empties the -wal file, so the erased rows' earlier copies leave the disk now. secure_delete zeroes them in the
 * main file when the deletion is checkpointed, but the WAL still holds the frames written before it until later
 * writes overwrite them, so with `serve` running an erased person's name would stay readable in the -wal. Without a
 * server, closing the last connection removes the -wal anyway.
 */
export async function dropWalCopies({ store, io, config }: Pick<CommandContext, "store" | "io" | "config">): Promise<void> {
  if (config.dbPath === ":memory:" || !store.maintenance) return;
  // The erasure has committed: whatever happens here, the command reports it as done.
  const complete = await store.maintenance.truncateWal().then((outcome) => outcome.complete, () => false);
  if (complete) return;
  io.stderr(`note: another connection kept using ${config.dbPath}-wal, so earlier copies of what was erased stay in ` +
    "it until the server's writes overwrite them; run `purge` later to try again\n");
}
